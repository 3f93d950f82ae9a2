// What `npm start` prints when it cannot start: one plain line naming the cause and the fix, not
// a stack (the stack is logged too with LOG_LEVEL=debug). Known causes get their own sentence;
// anything else its message's first line.

interface SystemError extends Error {
  code?: string;
  syscall?: string;
  path?: string;
  port?: number;
  address?: string;
}

export function startFailureLine(err: unknown, env: NodeJS.ProcessEnv = process.env): string {
  if (!(err instanceof Error)) return `${String(err)}.`;
  // A wrapped error (`cause`) is classified by the innermost one that carries a code.
  let e = err as SystemError;
  for (let inner: unknown = err.cause; inner instanceof Error; inner = inner.cause) {
    if ((inner as SystemError).code) {
      e = inner;
      break;
    }
  }
  if (!e.code) e = err;
  const dataDir = env.DATA_DIR ?? '.data';
  switch (e.code) {
    case 'EADDRINUSE':
      return `Port ${e.port ?? env.PORT ?? 8080} is already in use: stop what listens there, or set PORT to a free port.`;
    case 'EADDRNOTAVAIL':
      return `Cannot listen on ${e.address ?? env.HOST}: set HOST to an address of this machine (0.0.0.0 for all).`;
    case 'EEXIST':
    case 'ENOTDIR':
      return `${e.path ?? dataDir} is not a folder (a file is in the way): remove it, or set DATA_DIR to a folder.`;
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return `Cannot ${e.syscall ?? 'write'} ${e.path ?? dataDir} (${e.code}: not writable${e.code === 'EPERM' ? ', perhaps immutable' : ''}): make DATA_DIR (${dataDir}) a folder this user can write, or set DATA_DIR to one.`;
    case 'ENOSPC':
      return `No space left on the device of ${e.path ?? dataDir}: free some, or set DATA_DIR to another disk.`;
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'ETIMEDOUT':
      return `Cannot reach the database (${e.code}): check DATABASE_URL, or unset it to use the embedded PostgreSQL.`;
    case '28P01':
    case '28000':
      return 'The database refused the credentials of DATABASE_URL: correct the user or password in it.';
    case '3D000':
      return `${e.message}: create the database, or correct its name in DATABASE_URL.`;
    default:
      break;
  }
  const lines = e.message
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length === 0) return `${e.name}.`;
  // The embedded PostgreSQL's own words: its first line, and what the server said last that matters.
  const said = lines
    .slice(1)
    .reverse()
    .find((l) => /FATAL|ERROR|PANIC|error:/.test(l));
  const first = lines[0]!.replace(/:$/, '');
  return `${first}${said ? `: ${said}` : ''}${/[.!?]$/.test(first) || said ? '' : '.'}`;
}
