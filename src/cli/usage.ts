/**
 * Usage text for `svc serve`, generated from the config schema so that the flags, the
 * environment variables, the config-file keys and the defaults shown are the ones the
 * loader accepts.
 */
import { CONFIG_FIELDS, CONFIG_FILE_ENV, CONFIG_FILE_FLAG, formatDefault, type ConfigField } from '../config';

function placeholder(field: ConfigField): string {
  switch (field.kind) {
    case 'hostport': return '<host:port>';
    case 'integer': return '<n>';
    case 'number': return '<x>';
    case 'enum': {
      const values = field.schema.enum as string[];
      return values.length <= 3 ? `<${values.join('|')}>` : `<${field.path[field.path.length - 1]!.replace(/^log/, '').toLowerCase()}>`;
    }
    case 'string': return /Dir$/.test(field.path[field.path.length - 1]!) ? '<dir>' : '<text>';
    case 'boolean': return '';
  }
}

function flagColumn(field: ConfigField): string {
  if (field.kind === 'boolean') return `${field.flag}, --no-${field.flag.slice(2)}`;
  return `${field.flag} ${placeholder(field)}`;
}

const TITLES: Record<string, string> = {
  '': 'General',
  limits: 'Limits ([limits] table in the config file)',
  storage: 'Storage ([storage] table in the config file)',
};

/** `svc serve --help`. */
export function serveUsage(program = 'svc'): string {
  const width = 34; // flag column; longer flags put their description on the next line
  const indent = ' '.repeat(2 + width);
  const row = (flag: string, text: string) =>
    flag.length < width ? [`  ${flag.padEnd(width)}${text}`] : [`  ${flag}`, `${indent}${text}`];
  const out: string[] = [
    `Usage: ${program} serve [flags]`,
    '',
    'Starts a stream node: the protocol listener, the admin listener and the storage workers.',
    '',
    'Every setting is a flag, an SVC_* environment variable and a key in a TOML config file;',
    'flags win over the environment, the environment over the file, the file over defaults.',
    'Booleans: --flag / --no-flag; in the environment true, false, 1 or 0.',
    '',
    ...row(`${CONFIG_FILE_FLAG} <path>`, 'TOML config file (keys in snake_case)'),
    `${indent}env ${CONFIG_FILE_ENV}`,
  ];
  let group: string | null | undefined;
  for (const field of CONFIG_FIELDS) {
    if (field.group !== group) {
      group = field.group;
      out.push('', `${TITLES[group ?? ''] ?? group}:`);
    }
    out.push(...row(flagColumn(field), field.description));
    out.push(`${indent}env ${field.env}, file ${field.tomlKey}, default ${formatDefault(field)}`);
  }
  out.push(
    '',
    'With auth off the node binds loopback addresses only (127.0.0.0/8, ::1, localhost);',
    '--insecure-allow-remote lifts that. Full reference: docs/config.md.',
  );
  return out.join('\n') + '\n';
}
