// .env.example is written from the README's configuration table, so the two cannot drift: the
// table is the one place a variable is documented (test/tooling/env-example.test.ts holds both,
// and every variable the code reads, to that).
//
// A row may name several variables, with one default each: "`A` / `B` | `1` / `2`" or
// "`A`, `B` | unset, `5000`". A default in backticks is the literal value; any other text
// ("unset", "random, kept in ...") is a description, and the variable is left empty.

export interface EnvVariable {
  name: string;
  /** The literal default, or null when the default is described in words. */
  value: string | null;
  /** The default as the README words it. */
  defaultText: string;
  meaning: string;
}

const cells = (row: string) =>
  row
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(' | ')
    .map((c) => c.trim());

export function configurationTable(readme: string): EnvVariable[] {
  const section = readme.split(/^## /m).find((s) => s.startsWith('Configuration\n'));
  if (!section) throw new Error('README.md has no "## Configuration" section');
  const rows = section.split('\n').filter((line) => line.startsWith('| `'));
  const variables: EnvVariable[] = [];
  for (const row of rows) {
    const [names = '', defaults = '', meaning = ''] = cells(row);
    const nameList = [...names.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!);
    const separator = names.includes(' / ') ? ' / ' : ', ';
    const defaultParts = nameList.length > 1 ? defaults.split(separator) : [defaults];
    nameList.forEach((name, i) => {
      const defaultText = ((defaultParts.length === nameList.length ? defaultParts[i] : defaults) ?? '').trim();
      const literal = /^`([^`]*)`$/.exec(defaultText);
      variables.push({ name, value: literal ? literal[1]! : null, defaultText, meaning });
    });
  }
  return variables;
}

export function renderEnvExample(variables: EnvVariable[]): string {
  const lines = [
    '# Every setting of the service, with its default (README.md, "Configuration": this file is',
    '# written from that table by `npm run env:example`). Nothing here is required for `npm start`:',
    '# copy the lines you change into your environment (or an env file your process manager reads).',
    '',
  ];
  for (const v of variables) {
    lines.push(`# ${v.meaning}${v.value === null ? ` Default: ${v.defaultText.replace(/`/g, '')}.` : ''}`);
    lines.push(`# ${v.name}=${v.value ?? ''}`);
    lines.push('');
  }
  return lines.join('\n');
}
