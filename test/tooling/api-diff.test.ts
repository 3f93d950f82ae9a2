// The API diff CI runs: which changes to the contract break clients built from the previous one,
// and the command that fails on a breaking change to PROD unless the commit says it is intended.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAKING_MARKER, commitMessagesSay, compareSpecs, type Change } from '../../scripts/lib/api-diff.js';
import { projectRoot } from '../../platform/config.js';
import { loadSpec } from '../../server/contract.js';

const prod = loadSpec('PROD');
const mutated = (change: (doc: any) => void) => {
  const doc = structuredClone(prod);
  change(doc);
  return compareSpecs(prod, doc);
};
const breaking = (changes: Change[]) => changes.filter((c) => c.severity === 'breaking');
const schemas = (doc: any) => doc.components.schemas;

describe('compareSpecs', () => {
  it('finds nothing between a document and itself', () => {
    expect(compareSpecs(prod, structuredClone(prod))).toEqual([]);
  });

  it('names: removed operations, changed operationIds and tags, removed components are breaking', () => {
    expect(breaking(mutated((d) => delete d.paths['/api/accounts/me/'].get))).toEqual([
      { severity: 'breaking', where: 'GET /api/accounts/me/', what: 'operation removed (getProfile)' },
    ]);
    expect(breaking(mutated((d) => (d.paths['/api/accounts/me/'].get.operationId = 'readProfile')))[0]!.what).toContain(
      'operationId changed from getProfile to readProfile',
    );
    expect(breaking(mutated((d) => (d.paths['/api/accounts/me/'].get.tags = ['Profile'])))[0]!.what).toContain('tags changed');
    const renamed = mutated((d) => {
      const text = JSON.stringify(d).replaceAll('#/components/schemas/ProfileSchema"', '#/components/schemas/CustomerProfile"');
      Object.assign(d, JSON.parse(text));
      schemas(d).CustomerProfile = schemas(d).ProfileSchema;
      delete schemas(d).ProfileSchema;
    });
    expect(breaking(renamed).map((c) => c.where)).toContain('components.schemas.ProfileSchema');
  });

  it('added operations, optional response properties and documentation are not breaking', () => {
    const changes = mutated((d) => {
      d.paths['/api/new/thing'] = { get: { ...d.paths['/api/accounts/me/'].get, operationId: 'getNewThing' } };
      schemas(d).ProfileSchema.properties.nickname = { type: 'string', description: 'A new optional field.' };
      d.paths['/api/accounts/me/'].get.description = 'Reworded.';
      schemas(d).PushDeviceInput.description = 'Reworded too.';
    });
    expect(changes.length).toBeGreaterThanOrEqual(4);
    expect(breaking(changes)).toEqual([]);
  });

  it('request side: new required parameters or fields, removed enum values, tighter bounds are breaking', () => {
    // An operation that had no parameters at all gets a required one.
    const param = mutated((d) => {
      d.paths['/api/accounts/me/'].get.parameters = [{ name: 'fields', in: 'query', required: true, schema: { type: 'string' } }];
    });
    expect(breaking(param)).toEqual([
      { severity: 'breaking', where: 'GET /api/accounts/me/', what: 'required query parameter fields added' },
    ]);
    expect(breaking(mutated((d) => schemas(d).PushDeviceInput.required.push('app_kind')))[0]!.what).toBe('app_kind became required');
    expect(breaking(mutated((d) => (schemas(d).PushDeviceInput.properties.platform.enum = ['ios'])))[0]!.what).toBe(
      'enum values removed: "android"',
    );
    expect(breaking(mutated((d) => (schemas(d).PushDeviceInput.properties.push_token.maxLength = 100)))[0]!.what).toBe(
      'maxLength changed from 255 to 100',
    );
    // Loosening what the server accepts is fine.
    expect(breaking(mutated((d) => (schemas(d).PushDeviceInput.properties.push_token.maxLength = 512)))).toEqual([]);
    expect(breaking(mutated((d) => schemas(d).PushDeviceInput.properties.platform.enum.push('web')))).toEqual([]);
  });

  it('response side: new types (null), changed types, new enum values, removed or optional fields are breaking', () => {
    expect(breaking(mutated((d) => (schemas(d).ProfileSchema.properties.phone.type = ['string', 'null'])))[0]!.what).toBe(
      'type now also allows null',
    );
    // string -> integer: the client now receives integers it cannot read as strings.
    expect(breaking(mutated((d) => (schemas(d).ProfileSchema.properties.phone.type = 'integer'))).map((c) => c.what)).toEqual([
      'type now also allows integer',
    ]);
    const gender = (d: any) => schemas(d).ProfileSchema.properties.gender;
    const withGender = mutated((d) => {
      const g = gender(d);
      const target = g.$ref ? schemas(d)[g.$ref.split('/').pop()] : g;
      target.enum = [...target.enum, 'other'];
    });
    expect(breaking(withGender)[0]!.what).toContain('enum values added: "other"');
    expect(breaking(mutated((d) => (schemas(d).ProfileSchema.required = []))).map((c) => c.what)).toContain('phone no longer required');
    expect(breaking(mutated((d) => delete schemas(d).ProfileSchema.properties.email)).map((c) => c.what)).toContain(
      'property email removed',
    );
  });

  it('security that accepts fewer callers and a removed success status are breaking; a new error status is not', () => {
    const secured = mutated((d) => (d.paths['/api/logistics/map/config'].get.security = [{ CustomerJWTAuth: [] }]));
    expect(breaking(secured)[0]!.what).toBe('now requires authentication');
    const noSuccess = mutated((d) => delete d.paths['/api/accounts/me/'].get.responses['200']);
    expect(breaking(noSuccess)[0]).toMatchObject({ where: 'GET /api/accounts/me/ response 200', what: 'success response removed' });
    const newError = mutated(
      (d) => (d.paths['/api/accounts/me/'].get.responses['429'] = { $ref: '#/components/responses/TooManyRequests' }),
    );
    expect(newError).toEqual([{ severity: 'non-breaking', where: 'GET /api/accounts/me/ response 429', what: 'response added' }]);
  });

  it('a new value of an open enum (ErrorCode: clients handle unknown codes) is not breaking; of another response enum it is', () => {
    const newCode = mutated((d) => schemas(d).ErrorCode.enum.push('NEW_CODE'));
    expect(newCode).toEqual([{ severity: 'non-breaking', where: 'schema ErrorCode', what: 'enum values added: "NEW_CODE"' }]);
    const newGender = mutated((d) => {
      const g = schemas(d).ProfileSchema.properties.gender;
      (g.$ref ? schemas(d)[g.$ref.split('/').pop()] : g).enum.push('other');
    });
    expect(breaking(newGender)[0]!.what).toContain('enum values added: "other"');
  });

  it('a new kind of an open union (a message clients ignore when unknown) is not breaking; of a closed one, or a remapped kind, it is', () => {
    const variant = { type: 'object', properties: { kind: { const: 'x.new' } } };
    const newKind = mutated((d) => {
      const u = schemas(d).PickerRealtimeEvent;
      u.oneOf.push(variant);
      u.discriminator.mapping['x.new'] = '#/components/schemas/PickerSessionChangedEvent';
    });
    expect(breaking(newKind)).toEqual([]);
    expect(newKind.map((c) => c.what)).toEqual(['oneOf gained 1 variant(s)', 'discriminator mapping gained x.new']);

    const closed = mutated((d) => {
      const u = schemas(d).PickerRealtimeEvent;
      delete u['x-open-enum'];
      u.oneOf.push(variant);
    });
    expect(breaking(closed).map((c) => c.what)).toEqual(['oneOf gained 1 variant(s)']);

    const remapped = mutated((d) => {
      const m = schemas(d).PickerRealtimeEvent.discriminator.mapping;
      m['session.changed'] = m['queue.changed'];
    });
    expect(breaking(remapped).map((c) => c.what)).toContain('discriminator changed (not classified; treated as breaking)');
  });

  it('reports a change to a shared component once, not once per operation using it', () => {
    const changes = mutated((d) => (schemas(d).ErrorResponse.properties.code.description = 'Reworded.'));
    expect(changes).toEqual([{ severity: 'non-breaking', where: 'schema ErrorResponse .code', what: 'description changed' }]);
  });
});

describe('commitMessagesSay', () => {
  it(`recognises ${BREAKING_MARKER} anywhere in the messages, in any letter case`, () => {
    expect(commitMessagesSay(`Rename the field\n\n${BREAKING_MARKER}: the apps moved to v2`)).toBe(true);
    expect(commitMessagesSay('[Breaking-API] rename')).toBe(true);
    expect(commitMessagesSay('breaking api change')).toBe(false);
  });
});

describe('npm run api-diff (the command CI runs)', () => {
  let repo: string;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe' }).toString();
  // The contracts as the scratch repository's history goes on; each commit changes them further.
  const current = { test: loadSpec('TEST'), prod: loadSpec('PROD') };
  const commit = (message: string, change?: (doc: any) => void, env: 'test' | 'prod' | 'both' = 'both') => {
    for (const e of ['test', 'prod'] as const) {
      if (change && (env === 'both' || env === e)) change(current[e]);
      writeFileSync(path.join(repo, 'generated', `openapi.${e}.json`), JSON.stringify(current[e], null, 2));
    }
    git('add', '-A');
    git('commit', '-q', '--allow-empty', '-m', message);
  };
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'scripts', 'api-diff.ts'), '--repo', repo, ...args], {
      cwd: projectRoot,
      encoding: 'utf8',
      env: { ...process.env, API_DIFF_ALLOW_BREAKING: '' },
    });

  beforeAll(() => {
    repo = mkdtempSync(path.join(os.tmpdir(), 'api-diff-'));
    mkdirSync(path.join(repo, 'generated'));
    git('init', '-q');
    git('config', 'user.email', 'ci@example.com');
    git('config', 'user.name', 'CI');
  });
  afterAll(() => rmSync(repo, { recursive: true, force: true }));

  it('passes without a previous commit to compare with', () => {
    commit('first contract');
    const r = run();
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('nothing to check');
  });

  it('prints both contracts and passes on compatible changes', () => {
    commit('document the profile better', (d) => (d.paths['/api/accounts/me/'].get.description = 'Better words.'));
    const r = run('--head', 'HEAD');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('TEST contract (HEAD~1 -> HEAD): 0 breaking, 1 non-breaking');
    expect(r.stdout).toContain('PROD contract (HEAD~1 -> HEAD): 0 breaking, 1 non-breaking');
    expect(r.stdout).toContain('GET /api/accounts/me/: description changed');
  });

  it('fails on a breaking change to PROD whose commit does not declare it', () => {
    commit('drop the profile read', (d) => delete d.paths['/api/accounts/me/'].get);
    const r = run('--head', 'HEAD');
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('PROD contract (HEAD~1 -> HEAD): 1 breaking');
    expect(r.stdout).toContain('GET /api/accounts/me/: operation removed (getProfile)');
    expect(r.stderr).toContain(BREAKING_MARKER);
  });

  it('passes when the commit message declares the breaking change intended', () => {
    git('commit', '-q', '--amend', '-m', `drop the profile read ${BREAKING_MARKER}`);
    const r = run('--head', 'HEAD');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('declared intended');
  });

  it('prints but does not fail on a breaking change to TEST alone', () => {
    commit('rework a QA tool', (d) => delete d.paths['/api/qa/otp/last'], 'test');
    const r = run('--head', 'HEAD');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('TEST contract (HEAD~1 -> HEAD): 1 breaking');
    expect(r.stdout).toContain('PROD contract (HEAD~1 -> HEAD): no changes');
  });
});
