// `trellis [command] [arguments] [options]` → what to run, with its Config (flags win over the environment). Every
// error names what the user typed: the flag when a flag gave the value, the environment variable otherwise.
import { parseArgs } from 'node:util'
import { ConfigError, configFrom, DATA_COMMANDS, type Config, type DataCommand } from './config.ts'
import { FLAGS } from './config/flags.ts'
import { MCP_VARIABLES, mcpOptionsFrom, type McpOptions } from './config/mcp.ts'

/** The options every command takes (but help and version), each standing for an environment variable. */
const VARIABLES = new Map(Object.values(FLAGS).map((row) => [row.flag, row.variable]))

interface Syntax {
  /** Options of this command only, besides those every command takes. */
  own?: Record<string, 'string' | 'boolean'>
  /** Whether it takes arguments (their number is checked by the command: ops/cli.ts). */
  positionals?: boolean
  /** Takes not even those (help, version). */
  bare?: boolean
}

const COMMANDS: Record<string, Syntax> = {
  serve: {},
  'verify-ledger': {},
  healthcheck: {},
  backup: { positionals: true },
  restore: { own: { 'replace-nul': 'boolean' }, positionals: true },
  verify: {},
  'export-car': { own: { out: 'string' }, positionals: true },
  'import-car': { positionals: true },
  gc: { own: { 'dry-run': 'boolean' } },
  'migrate-to-postgres': { own: { 'replace-nul': 'boolean' } },
  takedown: { own: { reason: 'string' }, positionals: true },
  reinstate: { own: { reason: 'string' }, positionals: true },
  takedowns: { own: { state: 'string' } },
  // The MCP server speaks to a Trellis server over HTTP: it takes none of the server's options, only where that is.
  mcp: { bare: true, own: { url: 'string' } },
  help: { bare: true },
  version: { bare: true },
}

export type Command =
  | { kind: 'serve' | 'verify-ledger' | 'healthcheck'; config: Config }
  | { kind: 'data'; command: DataCommand; config: Config; args: string[]; out?: string }
  | { kind: 'mcp'; options: McpOptions }
  | { kind: 'help' }
  | { kind: 'version' }

export function parseCommand(argv: string[], env: Record<string, string | undefined>): Command {
  const named = argv[0] !== undefined && !argv[0].startsWith('-')
  const name = named ? argv[0]! : 'serve'
  const syntax = COMMANDS[name]
  if (!syntax) throw new ConfigError(`unknown command "${name}" (see trellis --help)`)
  const types: Record<string, 'string' | 'boolean'> = {
    ...(syntax.bare ? {} : Object.fromEntries([...VARIABLES.keys()].map((flag) => [flag, 'string'] as const))),
    ...syntax.own,
  }
  const { tokens } = parseArgs({
    args: named ? argv.slice(1) : argv,
    options: {
      ...Object.fromEntries(Object.entries(types).map(([option, type]) => [option, { type }])),
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
    strict: false, // unknown options and missing values come back as tokens: the messages below name them as typed
    allowPositionals: true,
    tokens: true,
  })
  const options = tokens.filter((token) => token.kind === 'option')
  if (name === 'help' || options.some((token) => token.name === 'help')) return { kind: 'help' }
  if (name === 'version' || options.some((token) => token.name === 'version')) return { kind: 'version' }

  const values: Record<string, string | undefined> = { ...env }
  const fromFlag = new Map<string, string>() // environment variable → the flag that set it
  let out: string | undefined
  const switches: string[] = [] // the command's own options, handed on after its arguments (`--dry-run`, `--reason why`)
  const positionals: string[] = []
  for (const token of tokens) {
    if (token.kind === 'positional') {
      if (!syntax.positionals) throw new ConfigError(`trellis ${name} takes no argument "${token.value}" (see trellis --help)`)
      positionals.push(token.value)
      continue
    }
    if (token.kind !== 'option') continue // `--`: what follows is positional
    const type = types[token.name]
    if (!type) throw new ConfigError(`unknown option ${token.rawName} for trellis ${name} (see trellis --help)`)
    if (type === 'boolean') {
      if (token.value !== undefined) throw new ConfigError(`${token.rawName} takes no value`)
      if (!switches.includes(`--${token.name}`)) switches.push(`--${token.name}`)
      continue
    }
    // `--data-dir --port 1` is a missing value, not a directory named --port (a value may follow `=`).
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))
      throw new ConfigError(`${token.rawName} needs a value`)
    if (token.name === 'out') out = token.value
    else if (token.name === 'url') {
      values[MCP_VARIABLES.url] = token.value
      fromFlag.set(MCP_VARIABLES.url, token.rawName)
    } else if (syntax.own?.[token.name] === 'string') {
      switches.push(`--${token.name}`, token.value) // the command's own value (`--reason why`), handed on with its name
    } else {
      const variable = VARIABLES.get(token.name)!
      values[variable] = token.value
      fromFlag.set(variable, token.rawName)
    }
  }

  let config: Config
  try {
    // `mcp` reads its own variables only: a server variable it never uses cannot stop it.
    if (name === 'mcp') return { kind: 'mcp', options: mcpOptionsFrom(values) }
    config = configFrom(values)
  } catch (error) {
    // configFrom's messages start with the variable they are about: name the flag instead when a flag gave it.
    const variable = error instanceof ConfigError ? error.message.split(' ', 1)[0]! : ''
    if (fromFlag.has(variable)) throw new ConfigError(`${fromFlag.get(variable)}${(error as Error).message.slice(variable.length)}`)
    throw error
  }
  if ((DATA_COMMANDS as readonly string[]).includes(name)) {
    return { kind: 'data', command: name as DataCommand, config, args: [...positionals, ...switches], out }
  }
  return { kind: name as 'serve' | 'verify-ledger' | 'healthcheck', config }
}
