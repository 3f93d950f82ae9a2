// The docs site: /docs serves the Redoc page of the service's own environment, self-contained
// (nothing is loaded from another host), stamped with the environment and build; PROD's page
// shows no TEST-only operation. A real headless Chromium (Debian's `chromium`, installed by
// .ci/run) opens it and finds an operation.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { OPERATIONS } from '../../generated/operations.js';
import { BUILD_STAMP_MARKER, docsPagePath } from '../../server/docs.js';
import { loadSpec } from '../../server/contract.js';
import { startTestService, type TestService } from '../support/service.js';

const CHROMIUM = '/usr/bin/chromium';
const inCi = Boolean(process.env.CI) && process.env.CI !== 'false';

let testSvc: TestService;
let prodSvc: TestService;
beforeAll(async () => {
  [testSvc, prodSvc] = await Promise.all([startTestService(), startTestService({ env: { APP_ENV: 'PROD' } })]);
});
afterAll(async () => {
  await Promise.all([testSvc?.close(), prodSvc?.close()]);
});

const testOnlyPaths = Object.values(OPERATIONS)
  .filter((o) => o.testOnly)
  .map((o) => o.path);

describe('the built pages (generated/docs.{test,prod}.html)', () => {
  for (const env of ['TEST', 'PROD'] as const) {
    it(`${env}: loads no script, style or font from another host and keeps the build-stamp slot`, () => {
      const html = readFileSync(docsPagePath(env), 'utf8');
      expect(html.length).toBeGreaterThan(100_000); // Redoc inlined, not referenced
      expect(html).not.toMatch(/<script[^>]+\bsrc=/i);
      expect(html).not.toMatch(/<link[^>]+\bhref=["']?(https?:)?\/\//i);
      expect(html).not.toMatch(/@import\s+url\(\s*["']?(https?:)?\/\//i);
      expect(html).not.toMatch(/url\(\s*["']?https?:\/\/[^)]*\.(woff2?|ttf|otf)/i);
      expect(html).toContain('http-equiv="Content-Security-Policy"');
      expect(html).toContain(BUILD_STAMP_MARKER);
    });
  }

  it("draws Redoc's attribution logo inline: the page asks no CDN for an image its policy would block", () => {
    for (const env of ['TEST', 'PROD'] as const) {
      const html = readFileSync(docsPagePath(env), 'utf8');
      expect(html, env).not.toContain('cdn.redoc.ly');
      expect(html, env).toContain('<link rel="icon" href="data:image/svg+xml,');
    }
  });

  it('says "(TEST only)" in the summary of every TEST-only operation', () => {
    const spec = loadSpec('TEST');
    const testOnly = Object.values<Record<string, any>>(spec.paths).flatMap((item) =>
      Object.values<any>(item).filter((op) => op?.operationId && (op['x-test-only'] || item['x-test-only'])),
    );
    expect(testOnly.map((op) => op.operationId)).toContain('searchPickerProductsByCursor');
    expect(testOnly.length).toBe(testOnlyPaths.length);
    for (const op of testOnly) expect(op.summary, op.operationId).toMatch(/\(TEST only\)$/);
  });

  it('PROD documents every PROD operation and no TEST-only one', () => {
    const prodHtml = readFileSync(docsPagePath('PROD'), 'utf8');
    const testHtml = readFileSync(docsPagePath('TEST'), 'utf8');
    expect(testOnlyPaths.length).toBeGreaterThanOrEqual(5);
    for (const p of testOnlyPaths) {
      expect(testHtml, p).toContain(`"${p}"`);
      expect(prodHtml, p).not.toContain(`"${p}"`);
    }
    for (const p of Object.keys(loadSpec('PROD').paths)) expect(prodHtml, p).toContain(`"${p}"`);
  });
});

describe('GET /docs', () => {
  it("serves the environment's page with its build stamp, offline-only policy and revalidation", async () => {
    const res = await fetch(`${testSvc.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('content-security-policy')).toContain("img-src 'self' data:");
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const html = await res.text();
    expect(html).toContain('<b data-environment>TEST</b>');
    expect(html).toContain('<code data-build-commit>testcommit</code>');
    expect(html).not.toContain(BUILD_STAMP_MARKER);
    expect(html).toContain('"/api/qa/otp/last"');

    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await fetch(`${testSvc.url}/docs`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('sends the page compressed to clients that accept gzip', async () => {
    const plain = await (await fetch(`${testSvc.url}/docs`, { headers: { 'accept-encoding': 'identity' } })).arrayBuffer();
    // node's fetch would decompress transparently; read the raw bytes through node:http instead.
    const raw = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      void import('node:http').then(({ get }) =>
        get(`${testSvc.url}/docs`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
        }).on('error', reject),
      );
    });
    expect(raw.encoding).toBe('gzip');
    expect(raw.body.length).toBeLessThan(plain.byteLength / 2);
    expect(gunzipSync(raw.body).equals(Buffer.from(plain))).toBe(true);
  });

  it('has a /favicon.ico, which browsers ask for by themselves', async () => {
    const res = await fetch(`${testSvc.url}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/x-icon');
    const body = Buffer.from(await res.arrayBuffer());
    // ICONDIR: reserved 0, type 1 (icon), one image of 32x32.
    expect([body.readUInt16LE(0), body.readUInt16LE(2), body.readUInt16LE(4), body[6], body[7]]).toEqual([0, 1, 1, 32, 32]);
    expect(body.readUInt32LE(14) + body.readUInt32LE(18)).toBe(body.length);
    expect(res.headers.get('cache-control')).toContain('max-age=');
  });

  it('sits beside the bundled spec of the same build, as JSON and as YAML', async () => {
    const json = await (await fetch(`${prodSvc.url}/openapi.json`)).json();
    const yamlResponse = await fetch(`${prodSvc.url}/openapi.yaml`);
    expect(yamlResponse.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(YAML.parse(await yamlResponse.text())).toEqual(json);
    expect(json['x-environment']).toBe('PROD');
    expect(json['x-build-commit']).toBe('testcommit');
  });

  it('PROD serves the PROD page, without TEST-only operations', async () => {
    const res = await fetch(`${prodSvc.url}/docs`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<b data-environment>PROD</b>');
    expect(html).toContain('Grocery service API (PROD)');
    for (const p of testOnlyPaths) expect(html, p).not.toContain(`"${p}"`);
  });
});

// Skipped only on a developer machine without Debian's chromium; under CI it must run.
describe.skipIf(!existsSync(CHROMIUM) && !inCi)('/docs in a real browser (headless Chromium)', () => {
  it('renders every tag, opens a known operation, and contacts no other host', { timeout: 180_000 }, async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: .ci/run installs Debian's chromium`).toBe(true);
    const { chromium } = await import('playwright-core');
    const profile = mkdtempSync(path.join(os.tmpdir(), 'docs-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const origin = new URL(testSvc.url).origin;
      // Anything addressed elsewhere is recorded and refused (the page's policy should stop it first).
      const elsewhere: string[] = [];
      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
        elsewhere.push(url);
        return route.abort();
      });
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (err) => pageErrors.push(err.message));
      // A request the page's policy refuses (Redoc's CDN logo was one) is a console error, not a request.
      const consoleErrors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });

      // Rendering a 3 MB page takes seconds on a busy CI machine: poll generously.
      const patiently = { timeout: 30_000, interval: 100 };
      const response = await page.goto(`${testSvc.url}/docs`, { waitUntil: 'load', timeout: 60_000 });
      expect(response?.status()).toBe(200);
      await expect.poll(() => page.locator('[data-environment]').innerText(), patiently).toBe('TEST');

      // Every tag of the spec is listed in the navigation.
      const spec = loadSpec('TEST');
      for (const tag of spec.tags.map((t: { name: string }) => t.name)) {
        await expect.poll(() => page.getByText(tag, { exact: true }).first().isVisible(), { ...patiently, message: tag }).toBe(true);
      }

      // Open GET /api/accounts/me/ (getProfile) from the navigation, as a reader would.
      const summary = spec.paths['/api/accounts/me/']!.get!.summary as string;
      await page.getByText('Accounts', { exact: true }).first().click();
      await page.getByText(summary, { exact: true }).first().click();
      await expect.poll(() => decodeURIComponent(new URL(page.url()).hash).toLowerCase(), patiently).toContain('getprofile');
      await expect.poll(() => page.getByRole('heading', { name: summary }).first().isVisible(), patiently).toBe(true);
      await expect.poll(() => page.getByText('/api/accounts/me/').first().isVisible(), patiently).toBe(true);

      expect(pageErrors).toEqual([]);
      expect(consoleErrors).toEqual([]);
      expect(elsewhere).toEqual([]);
      expect(
        await page
          .locator('img')
          .evaluateAll(
            (imgs) => imgs.filter((i) => !(i as HTMLImageElement).complete || (i as HTMLImageElement).naturalWidth === 0).length,
          ),
      ).toBe(0);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });
});
