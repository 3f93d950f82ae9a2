// No Docker engine runs on these machines, so the image cannot be built here. This holds the
// Dockerfile to what is tested: the build commands of test/build/built-service.test.ts, the start
// command of `npm run start:prod`, the Node line of package.json, and the runtime rules (slim
// official image, non-root, exec-form CMD, a health check, nothing of the checkout's state).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../platform/config.js';

const read = (file: string) => readFileSync(path.join(projectRoot, file), 'utf8');
const pkg = JSON.parse(read('package.json'));
const dockerfile = read('Dockerfile');
// Instructions with their continuation lines joined, comments dropped.
const instructions = dockerfile
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));
const stages = new Map<string, string[]>();
let current: string[] = [];
for (const line of instructions) {
  const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
  if (from) stages.set(from[2] ?? from[1]!, (current = [line]));
  else current.push(line);
}
const stage = (name: string) => {
  const lines = stages.get(name);
  if (!lines) throw new Error(`the Dockerfile has no stage "${name}"`);
  return lines;
};
const runs = (name: string) =>
  stage(name)
    .filter((l) => l.startsWith('RUN '))
    .map((l) => l.slice(4));
const nodeVersion = /^ARG NODE_VERSION=(\S+)$/m.exec(dockerfile)?.[1];

describe('Dockerfile', () => {
  it('uses the pinned Node line of package.json and .nvmrc, on the official slim image', () => {
    expect(nodeVersion).toBe(pkg.engines.node);
    expect(read('.nvmrc').trim()).toBe(pkg.engines.node);
    for (const [, lines] of stages) expect(lines[0]).toMatch(/^FROM node:\$\{NODE_VERSION\}-[a-z]+-slim\b/);
  });

  it('builds with the commands the build test runs', () => {
    expect(runs('build')).toContain('npm ci --no-audit --no-fund');
    expect(runs('build').some((r) => r.endsWith('npm run build'))).toBe(true);
    expect(pkg.scripts.build).toBeDefined();
    // Production dependencies only, as `npm ci --omit=dev` in the build test.
    expect(runs('deps').some((r) => r.startsWith('npm ci --omit=dev'))).toBe(true);
  });

  it('runs the compiled service as a non-root user, started like npm run start:prod, in exec form', () => {
    const runtime = stage('runtime');
    expect(runtime.some((l) => /^USER\s+(?!root\b|0\b)\S+/.test(l))).toBe(true);
    const cmd = runtime.find((l) => l.startsWith('CMD '));
    expect(cmd).toBeDefined();
    const argv = JSON.parse(cmd!.slice(4)) as string[];
    expect(argv.join(' ')).toBe(pkg.scripts['start:prod']);
    expect(runtime.some((l) => l.startsWith('RUN npm') || l.includes('tsx'))).toBe(false);
    // Nothing but the compiled output, production node_modules and package.json reaches it.
    const copies = runtime.filter((l) => l.startsWith('COPY '));
    expect(copies.map((l) => l.split(/\s+/).slice(-2)[0])).toEqual(['/app/node_modules', '/app/dist', 'package.json']);
  });

  it('checks /healthz', () => {
    const check = stage('runtime').find((l) => l.startsWith('HEALTHCHECK '));
    expect(check).toMatch(/\/healthz/);
    expect(check).toMatch(/CMD \[/);
  });

  it('keeps the checkout state out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['.git', 'node_modules', 'dist', '.data', '.tmp', '.env']) expect(ignored).toContain(entry);
  });
});
