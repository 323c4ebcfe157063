// Writes the settings tables of README.md and docs/operations.md from the declarations
// (src/kernel/settings.ts). `npm run docs:settings` rewrites them; test/unit/settings-docs.test.ts fails when they drift.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  SETTINGS,
  SETTING_SECTIONS,
  type SettingDeclaration,
  type SettingName,
  type SettingSection,
} from '../src/kernel/settings.js';

export const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const BEGIN =
  '<!-- settings table: written by `npm run docs:settings` from packages/server/src/kernel/settings.ts -->';
const END = '<!-- end of settings table -->';

const declared = Object.entries(SETTINGS) as [SettingName, SettingDeclaration][];

/** The default as an operator reads it. */
function shownDefault(setting: SettingDeclaration): string {
  switch (setting.type) {
    case 'integer':
    case 'boolean':
    case 'instant':
    case 'choice':
      return `\`${String(setting.default)}\``;
    case 'text':
      return `\`${setting.shown ?? setting.default ?? ''}\``;
    case 'ed25519-key':
      return 'generated';
    case 'secret':
    case 'list':
      return 'unset';
  }
}

/** What values are accepted, when narrower than the type says. */
function shownRange(setting: SettingDeclaration): string {
  if (setting.type === 'integer') return `${setting.min}-${setting.max}`;
  if (setting.type === 'choice') return setting.choices.map((choice) => `\`${choice}\``).join(', ');
  if (setting.type === 'boolean') return '`true` or `false`';
  if (setting.type === 'list') return 'comma-separated';
  return '';
}

/** A Markdown table as Prettier writes it: every column padded to its widest cell. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, column) =>
    Math.max(3, cell.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]): string =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

/** README.md: the dozen a deployer sets. */
export function readmeTable(): string {
  return table(
    ['Variable', 'Default', 'Meaning'],
    declared
      .filter(([, setting]) => setting.deployer === true)
      .map(([name, setting]) => [`\`${name}\``, shownDefault(setting), setting.meaning]),
  );
}

/** docs/operations.md: every setting, by section. */
export function operationsTables(): string {
  return (Object.entries(SETTING_SECTIONS) as [SettingSection, string][])
    .map(([section, title]) => {
      const rows = declared
        .filter(([, setting]) => setting.section === section)
        .map(([name, setting]) => [
          `\`${name}\``,
          shownDefault(setting),
          shownRange(setting),
          setting.meaning,
        ]);
      return `${title}:\n\n${table(['Variable', 'Default', 'Accepts', 'Meaning'], rows)}`;
    })
    .join('\n\n');
}

/** The document with its generated block replaced by `block`; throws if it has no such block. */
export function withBlock(document: string, block: string, file: string): string {
  const begin = document.indexOf(BEGIN);
  const end = document.indexOf(END);
  if (begin === -1 || end < begin) throw new Error(`${file} has no settings table markers`);
  return `${document.slice(0, begin)}${BEGIN}\n\n${block}\n\n${document.slice(end)}`;
}

export const GENERATED: readonly { file: string; block: () => string }[] = [
  { file: 'README.md', block: readmeTable },
  { file: 'docs/operations.md', block: operationsTables },
];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const { file, block } of GENERATED) {
    const at = path.join(REPOSITORY, file);
    fs.writeFileSync(at, withBlock(fs.readFileSync(at, 'utf8'), block(), file));
    process.stdout.write(`wrote the settings table of ${file}\n`);
  }
}
