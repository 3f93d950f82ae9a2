// The commands on one item of a session, each turned into the state machine's command
// (domain/picking/items.ts) and run by item-command.ts: scan, replacement, piece quantity,
// manual pick, weight, missing, and the clarification's resolve, reopen and confirm.
import { labelWeight } from '../../domain/codes/scale-label.js';
import { UNIT, type ReplacementMatch } from '../../domain/picking/items.js';
import type { AppDeps } from '../deps.js';
import { itemCommand, lookUpBarcode, scanMatch, scannedPlu, type ItemPath, type ItemReply } from './item-command.js';
import { replacementData } from './new-items.js';
import type { BodyOf, CommandRequest, PickerCommand } from './runner.js';
import type { OperationId } from '../../generated/operations.js';

type Deps = Pick<AppDeps, 'db' | 'clock'>;
type Request<K extends OperationId> = CommandRequest<ItemPath, BodyOf<K>>;

/** A barcode scanned to pick the item as it is (or as its replacement). */
export const scanItem = (deps: Deps, cmd: PickerCommand, request: Request<'scanPickingItem'>): Promise<ItemReply> =>
  itemCommand(deps, cmd, request, 'scan', async (s, item) => {
    const scanned = await lookUpBarcode(s, request.body.barcode);
    return { command: { type: 'scan', barcode: scanned.barcode, match: scanMatch(item, scanned) }, scanned, log: 'scan' };
  });

/** A barcode scanned to pick another product instead of the missing one. */
export const replaceItem = (deps: Deps, cmd: PickerCommand, request: Request<'replacePickingItem'>): Promise<ItemReply> =>
  itemCommand(deps, cmd, request, 'replacement', async (s, item) => {
    const scanned = await lookUpBarcode(s, request.body.barcode);
    const found = scanned.found;
    const match: ReplacementMatch = !found
      ? { kind: 'unknown' }
      : found.row.product_id === item.product_id
        ? { kind: 'same_product' }
        : {
            kind: 'substitute',
            isWeightBased: found.row.weight_based,
            labelWeight: found.byLabel ? labelWeight(scanned.code) : null,
            labelPlu: found.byLabel ? scannedPlu(scanned.code) : null,
          };
    return {
      command: { type: 'replacement', barcode: scanned.barcode, match },
      scanned,
      log: 'replacement',
      replacement: found ? replacementData(found.row) : undefined,
    };
  });

export const setPieceQuantity = (deps: Deps, cmd: PickerCommand, request: Request<'setPickingItemPieceQuantity'>): Promise<ItemReply> =>
  itemCommand(deps, cmd, request, 'piece_quantity', async () => ({
    command: { type: 'piece_quantity', quantity: BigInt(request.body.quantity) * UNIT },
  }));

export const manualPick = (deps: Deps, cmd: PickerCommand, request: Request<'manualPickPickingItem'>): Promise<ItemReply> =>
  itemCommand(deps, cmd, request, 'manual_pick', async () => ({
    command: { type: 'manual_pick', quantity: BigInt(request.body.quantity) * UNIT, confirm: request.body.confirm ?? false },
  }));

/** A weight (thousandths of a kg, already checked positive), with the scale label's barcode when one was scanned. */
export const weighItem = (deps: Deps, cmd: PickerCommand, request: Request<'weighPickingItem'>, weight: bigint): Promise<ItemReply> => {
  const barcode = request.body.barcode ?? null;
  return itemCommand(deps, cmd, request, 'weight', async (s, item) => {
    if (barcode === null) return { command: { type: 'weight', weight, barcode: null, match: null } };
    const scanned = await lookUpBarcode(s, barcode);
    return { command: { type: 'weight', weight, barcode: scanned.barcode, match: scanMatch(item, scanned) }, scanned, log: 'weight' };
  });
};

export const markMissing = (deps: Deps, cmd: PickerCommand, request: Request<'markPickingItemMissing'>): Promise<ItemReply> =>
  itemCommand(deps, cmd, request, 'missing', async () => ({ command: { type: 'missing', action: request.body.action } }));

export const resolveClarification = (
  deps: Deps,
  cmd: PickerCommand,
  request: Request<'resolvePickingItemClarification'>,
): Promise<ItemReply> =>
  itemCommand(deps, cmd, request, 'resolve', async () => ({ command: { type: 'resolve', resolution: request.body.resolution } }));

export const reopenItem = (deps: Deps, cmd: PickerCommand, request: Request<'reopenPickingItem'>): Promise<ItemReply> =>
  itemCommand(deps, cmd, request, 'reopen', async () => ({ command: { type: 'reopen', reason: request.body.reason } }));

/**
 * The picker confirms a discrepancy the state machine asked about: the confirmed quantity in
 * pieces (thousandths) or `quantityKg` (thousandths of a kg, already checked positive).
 */
export const confirmClarification = (
  deps: Deps,
  cmd: PickerCommand,
  request: Request<'confirmPickingItemClarification'>,
  quantityKg: bigint | null,
): Promise<ItemReply> => {
  const quantity = request.body.quantity == null ? null : BigInt(request.body.quantity) * UNIT;
  return itemCommand(deps, cmd, request, 'confirm', async () => ({
    command: { type: 'confirm', resolution: request.body.resolution ?? null, quantity, quantityKg },
  }));
};
