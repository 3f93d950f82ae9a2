// npm run build [-- --out <folder>]: compiles the service to dist/ (or <folder>) and ships beside it
// what it reads at run time, so that dist/ with the production dependencies is the whole application:
//   dist/**/*.js          tsc output of the entry points (tsconfig.build.json) and what they import
//   dist/generated/       the bundled specs and docs pages (server/contract.ts, server/docs.ts)
//   dist/build-info.json  the commit it was built from (a built copy has no .git) and its Node line
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gitCommit } from '../platform/config.js';

const root = path.resolve(import.meta.dirname, '..');
const outFlag = process.argv.indexOf('--out');
const dist = path.resolve(outFlag >= 0 ? process.argv[outFlag + 1]! : path.join(root, 'dist'));

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', dist], {
  cwd: root,
  stdio: 'inherit',
});

mkdirSync(path.join(dist, 'generated'), { recursive: true });
for (const file of readdirSync(path.join(root, 'generated'))) {
  if (file.endsWith('.json') || file.endsWith('.html'))
    copyFileSync(path.join(root, 'generated', file), path.join(dist, 'generated', file));
}

const commit = process.env.BUILD_COMMIT || gitCommit(root);
writeFileSync(path.join(dist, 'build-info.json'), JSON.stringify({ commit, node: process.version }, null, 2) + '\n');
console.log(`built ${path.relative(root, dist) || dist} (commit ${commit}, ${process.version})`);
