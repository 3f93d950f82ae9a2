// GET /docs: the Redoc page of the service's own environment (generated/docs.<env>.html, built by
// `npm run docs` / `npm run generate`), stamped with the environment and the build commit so a
// reader knows exactly which contract they read (interface spec, Versioning 1).
//
// The page is read and compressed once, on the first request: start-up stays fast and a process
// that never serves /docs never holds the 3 MB page in memory.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type express from 'express';
import { acceptsGzip } from './http/conditional.js';
import { generatedDir, type AppEnv } from '../platform/config.js';

const gzipAsync = promisify(gzip);

/** Where the template (scripts/docs-template.hbs) leaves room for the build stamp. */
export const BUILD_STAMP_MARKER = '<!--service-build-stamp-->';

/**
 * The same policy as the page's own <meta> (both apply): the browser may load nothing from another
 * host, so the page works offline and leaks no visit to a CDN.
 */
export const DOCS_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
  "connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const docsPagePath = (env: AppEnv) => path.join(generatedDir, `docs.${env.toLowerCase()}.html`);

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A thin bar above Redoc: environment, build, and links to the bundled specs of this service. */
export function buildStamp(env: AppEnv, commit: string): string {
  return (
    // Redoc offsets its sticky navigation by --navbar-stack-height (set to 0 inline on its root
    // element; an !important rule wins over that), so the bar stays above the navigation.
    '<style>:root, [style*="--navbar-stack-height"] { --navbar-stack-height: 29px !important; }</style>' +
    '<div style="position: sticky; top: 0; z-index: 1000; height: 29px; box-sizing: border-box; font: 13px/28px system-ui, sans-serif; ' +
    'padding: 0 16px; background: #f4f5f7; border-bottom: 1px solid #dcdfe4; color: #333">' +
    `Environment <b data-environment>${escapeHtml(env)}</b> &middot; build <code data-build-commit>${escapeHtml(commit)}</code> &middot; ` +
    // Relative links: they keep working behind a proxy that mounts the service under a prefix.
    '<a href="openapi.json">openapi.json</a> &middot; <a href="openapi.yaml">openapi.yaml</a></div>'
  );
}

interface Page {
  html: Buffer;
  gzipped: Buffer;
  etag: string;
}

export function docsHandler(env: AppEnv, commit: string, file = docsPagePath(env)): express.RequestHandler {
  let page: Promise<Page> | null = null;
  const load = async (): Promise<Page> => {
    const source = await readFile(file, 'utf8');
    const html = Buffer.from(source.replace(BUILD_STAMP_MARKER, buildStamp(env, commit)));
    return {
      html,
      gzipped: await gzipAsync(html, { level: 9 }),
      etag: `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`,
    };
  };

  return async (req, res, next) => {
    try {
      page ??= load();
      const { html, gzipped, etag } = await page;
      res.setHeader('Content-Security-Policy', DOCS_CONTENT_SECURITY_POLICY);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Cache-Control', 'no-cache'); // revalidate: a new build changes the page
      res.setHeader('ETag', etag);
      res.setHeader('Vary', 'Accept-Encoding');
      if (req.headers['if-none-match'] === etag) {
        res.status(304).end();
        return;
      }
      res.type('text/html; charset=utf-8');
      const gzip = acceptsGzip(req.headers['accept-encoding']);
      if (gzip) res.setHeader('Content-Encoding', 'gzip');
      res.end(req.method === 'HEAD' ? undefined : gzip ? gzipped : html);
    } catch (err) {
      // A missing page is a broken build (generated/ is committed); try again on the next request.
      page = null;
      next(err);
    }
  };
}
