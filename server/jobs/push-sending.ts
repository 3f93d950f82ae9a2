// Push sending (order worker, job 2): due deliveries go to the push provider, one device's in
// order, with retries and backoff; a delivery superseded by a later one about the same order is
// dropped; dead tokens forget their device.
import { claimDuePushDeliveries, finishPushDeliveries, forgetPushDevice, type PushDeliveryOutcome } from '../../db/queries/push.js';
import { afterFailure } from '../../domain/time/retry-schedule.js';
import type { AppDeps } from '../../services/deps.js';

/** One batch of due deliveries: how many it took (a full batch: more may be due) and how many went out. */
export async function sendPushes(deps: AppDeps): Promise<{ taken: number; sent: number }> {
  const { maxAttempts, retryBaseSeconds } = deps.config.orders.push;
  const sender = deps.push;
  return deps.db.transaction().execute(async (trx) => {
    const due = await claimDuePushDeliveries(trx, deps.config.orders.worker.batchSize);
    // One device's notifications go out one after another, in the order they were made (the
    // phone shows them in arrival order); devices are independent and sent to at once.
    type Outcome = Awaited<ReturnType<typeof sender.send>> | 'no_device' | 'superseded';
    const outcomes = new Array<Outcome>(due.length);
    const byDevice = new Map<string, number[]>();
    for (const [i, d] of due.entries()) byDevice.set(d.device_id, [...(byDevice.get(d.device_id) ?? []), i]);
    await Promise.all(
      [...byDevice.values()].map(async (indexes) => {
        for (const i of indexes) {
          const d = due[i];
          if (d!.superseded) outcomes[i] = 'superseded';
          else if (!d!.push_token || !d!.platform) outcomes[i] = 'no_device';
          else {
            outcomes[i] = await sender
              .send({
                token: d!.push_token,
                platform: d!.platform,
                notificationId: d!.notification_id,
                title: d!.title,
                body: d!.body,
                data: d!.data,
              })
              .catch((err: Error) => ({ kind: 'retry' as const, error: err.message }));
          }
        }
      }),
    );
    const finished: PushDeliveryOutcome[] = [];
    for (const [i, d] of due.entries()) {
      const outcome = outcomes[i]!;
      const key = { notification_id: d.notification_id, device_id: d.device_id };
      if (outcome === 'no_device') {
        finished.push({ ...key, state: 'skipped', error: 'the installation was removed' });
      } else if (outcome === 'superseded') {
        finished.push({ ...key, state: 'skipped', error: 'superseded by a later notification about the order' });
      } else if (outcome.kind === 'sent') {
        finished.push({ ...key, state: 'sent' });
      } else if (outcome.kind === 'invalid_token') {
        finished.push({ ...key, state: 'stale_token', error: outcome.error });
        await forgetPushDevice(trx, d.device_id, d.push_token!);
      } else if (outcome.kind === 'rejected') {
        finished.push({ ...key, state: 'failed', error: outcome.error });
      } else {
        const next = afterFailure(d.attempts + 1, maxAttempts, retryBaseSeconds);
        finished.push(
          next.retry
            ? { ...key, state: 'pending', error: outcome.error, delaySeconds: next.delaySeconds }
            : { ...key, state: 'failed', error: outcome.error },
        );
      }
    }
    await finishPushDeliveries(trx, finished);
    const sent = finished.filter((f) => f.state === 'sent').length;
    return { taken: due.length, sent };
  });
}
