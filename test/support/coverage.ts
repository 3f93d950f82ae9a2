// Which (operationId, status) pairs the suite exercised. Every checked response is recorded;
// at the end of the run the report is written to .tmp/contract-coverage.json and the run fails
// when an implemented operation has no test of a success status.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../platform/config.js';

// One folder per run (the run id of global-setup), so runs side by side do not mix or wipe records.
const dirOf = (runId: string) => path.join(projectRoot, '.tmp', 'contract-coverage', runId);

export function recordExercised(operationId: string, status: number): void {
  const dir = dirOf(process.env.CONTRACT_COVERAGE_RUN ?? 'default');
  mkdirSync(dir, { recursive: true });
  appendFileSync(path.join(dir, `${process.pid}.jsonl`), JSON.stringify({ operationId, status }) + '\n');
}

/** Starts a run's records; test workers inherit the run id through the environment. */
export function startCoverage(runId: string): void {
  process.env.CONTRACT_COVERAGE_RUN = runId;
  rmSync(dirOf(runId), { recursive: true, force: true });
}

export async function reportCoverage(runId: string): Promise<void> {
  const dir = dirOf(runId);
  const { handlers } = await import('../../handlers/index.js');
  const { isNotImplemented } = await import('../../server/handler-types.js');
  const { OPERATIONS } = await import('../../generated/operations.js');
  const seen = new Map<string, Set<number>>();
  if (existsSync(dir)) {
    for (const file of readdirSync(dir)) {
      for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n')) {
        if (!line) continue;
        const { operationId, status } = JSON.parse(line) as { operationId: string; status: number };
        if (!seen.has(operationId)) seen.set(operationId, new Set());
        seen.get(operationId)!.add(status);
      }
    }
  }
  const ids = Object.keys(OPERATIONS);
  const implemented = ids.filter((id) => !isNotImplemented((handlers as Record<string, unknown>)[id]));
  const missingSuccess = implemented.filter((id) => ![...(seen.get(id) ?? [])].some((s) => (s >= 200 && s < 300) || s === 304));
  const report = {
    operations: ids.length,
    implemented: implemented.length,
    exercised: Object.fromEntries([...seen].sort().map(([id, s]) => [id, [...s].sort()])),
    implemented_without_success_test: missingSuccess,
  };
  mkdirSync(path.dirname(dir), { recursive: true });
  writeFileSync(path.join(projectRoot, '.tmp', 'contract-coverage.json'), JSON.stringify(report, null, 2) + '\n');
  rmSync(dir, { recursive: true, force: true });
  const pairs = [...seen.values()].reduce((n, s) => n + s.size, 0);
  console.log(
    `contract coverage: ${seen.size}/${ids.length} operations exercised, ${pairs} (operation, status) pairs; ` +
      `${implemented.length} implemented, ${missingSuccess.length} of them without a success test (.tmp/contract-coverage.json)`,
  );
  // `npm test` (the whole suite) enforces; a run of a few files only reports.
  if (missingSuccess.length && process.env.CONTRACT_COVERAGE === 'strict') {
    throw new Error(`implemented operations without a test of their success status: ${missingSuccess.join(', ')}`);
  }
}
