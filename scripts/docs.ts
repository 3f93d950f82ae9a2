// npm run docs: the Redoc pages of the TEST and PROD specs, self-contained (scripts and styles
// inlined, no network at view time), built from the bundled specs in generated/.
//
// The pages are part of generated/ (`npm run generate` builds them too): they are deterministic,
// so CI's drift check proves that the committed pages match the spec, the service serves them
// without a build step at start, and PROD serves exactly the page that was reviewed.
//   npm run docs                  rebuild generated/docs.{test,prod}.html from generated/openapi.*.json
//   npm run docs -- --out DIR     write the two pages to DIR instead (e.g. to publish them elsewhere)
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const TEMPLATE = path.join(root, 'scripts', 'docs-template.hbs');
const quietEnv = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

/** Where the page of an environment lives inside a generated folder. */
export const docsFileName = (env: 'test' | 'prod') => `docs.${env}.html`;

/**
 * Redoc 3 draws its "API docs by Redoc" attribution with an image from its CDN and has no option to
 * turn it off; the page's policy (nothing from another host) blocked it: a broken image and a
 * console error on every visit. The attribution stays, drawn from an inline SVG (a data: URI the
 * policy allows) instead of the CDN.
 */
const REDOC_LOGO_URLS = ['https://cdn.redoc.ly/redoc/logo-mini-full.svg', 'https://cdn.redoc.ly/redoc/logo-mini.svg'];
const REDOC_LOGO_INLINE =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="20" viewBox="0 0 64 20">' +
      '<text x="0" y="15" font-family="Montserrat, Helvetica, Arial, sans-serif" font-size="15" font-weight="700" fill="#e53935">Redoc</text></svg>',
  );

/** The built page with every image it would fetch from Redoc's CDN drawn inline instead. */
export function inlineRedocLogo(html: string): string {
  let out = html;
  for (const url of REDOC_LOGO_URLS) out = out.replaceAll(url, REDOC_LOGO_INLINE);
  return out;
}

/** Builds docs.test.html and docs.prod.html in `outDir` from openapi.{test,prod}.json in `bundleDir`. */
export function buildDocs(bundleDir: string, outDir: string): void {
  mkdirSync(outDir, { recursive: true });
  for (const env of ['test', 'prod'] as const) {
    const args = [
      'build-docs',
      path.join(bundleDir, `openapi.${env}.json`),
      '--inlineBundle',
      '--template',
      TEMPLATE,
      '--title',
      `Grocery service API (${env.toUpperCase()})`,
      // No telemetry beacons from the page; the download button offers the embedded spec.
      '--openapi.disableTelemetry=true',
      '-o',
      path.join(outDir, docsFileName(env)),
    ];
    try {
      execFileSync(path.join(root, 'node_modules', '.bin', 'redocly'), args, {
        cwd: root,
        env: quietEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      const e = err as { stdout?: Buffer; stderr?: Buffer };
      process.stderr.write(String(e.stdout ?? '') + String(e.stderr ?? ''));
      throw new Error(`redocly build-docs of the ${env.toUpperCase()} spec failed`, { cause: err });
    }
    const file = path.join(outDir, docsFileName(env));
    writeFileSync(file, inlineRedocLogo(readFileSync(file, 'utf8')));
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  const outAt = process.argv.indexOf('--out');
  const outDir = outAt >= 0 ? path.resolve(process.argv[outAt + 1] ?? '') : path.join(root, 'generated');
  const generated = path.join(root, 'generated');
  buildDocs(generated, outDir);
  console.log(`docs written: ${path.join(outDir, docsFileName('test'))}, ${path.join(outDir, docsFileName('prod'))}`);
}
