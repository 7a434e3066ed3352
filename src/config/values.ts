// How the text of one variable becomes a value. Every refusal is a ConfigError whose message starts with the
// variable's name: command-line.ts puts the flag in its place when a flag gave the value.
import { isIP } from 'node:net'

export class ConfigError extends Error {}

export type Environment = Record<string, string | undefined>

/** Reads one variable's text (undefined when unset) into a value, or throws a ConfigError naming it. */
export type Reader<T> = (name: string, raw: string | undefined) => T

/** A setting read from one variable: a row of a table (flags.ts, environment.ts). */
export interface Setting<T> {
  variable: string
  read: Reader<T>
}

export type ValuesOf<Table extends Record<string, Setting<unknown>>> = { [K in keyof Table]: ReturnType<Table[K]['read']> }

/** Every row of a table, in its order: of several bad variables, the first row's is the one named. */
export function readAll<Table extends Record<string, Setting<unknown>>>(table: Table, env: Environment): ValuesOf<Table> {
  return Object.fromEntries(
    Object.entries(table).map(([key, { variable, read }]) => [key, read(variable, env[variable])]),
  ) as ValuesOf<Table>
}

export const read = <T>(env: Environment, variable: string, reader: Reader<T>): T => reader(variable, env[variable])

export const text =
  (fallback: string): Reader<string> =>
  (_, raw) =>
    raw || fallback
export const optionalText: Reader<string | null> = (_, raw) => raw || null
/** Set to 1 (anything else is off). */
export const setToOne: Reader<boolean> = (_, raw) => raw === '1'

export const integer =
  (fallback: number, min: number, max: number): Reader<number> =>
  (name, raw) => {
    if (raw === undefined || raw === '') return fallback
    if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`)
    const n = Number(raw)
    if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}`)
    return n
  }

/** A number of seconds that may have a fraction (0.2). */
export const seconds =
  (fallback: number, min: number, max: number): Reader<number> =>
  (name, raw) => {
    if (raw === undefined || raw === '') return fallback
    if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(`${name} must be a number of seconds, got "${raw}"`)
    const n = Number(raw)
    if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}`)
    return n
  }

export const signedInteger: Reader<number> = (name, raw) => {
  if (raw === undefined || raw === '') return 0
  if (!/^-?\d{1,10}$/.test(raw)) throw new ConfigError(`${name} must be an integer`)
  return Number(raw)
}

export const oneOf =
  <T extends string>(allowed: readonly T[], fallback: T): Reader<T> =>
  (name, raw) => {
    if (raw === undefined || raw === '') return fallback
    if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}`)
    return raw as T
  }

/** `read`'s value when set, null when not. */
export const optional =
  <T>(read: Reader<T>): Reader<T | null> =>
  (name, raw) =>
    raw === undefined || raw === '' ? null : read(name, raw)

/** on or off, as a boolean. */
export const onOff =
  (fallback: 'on' | 'off'): Reader<boolean> =>
  (name, raw) =>
    oneOf(['on', 'off'], fallback)(name, raw) === 'on'

export const address =
  (fallback: `0x${string}`): Reader<`0x${string}`> =>
  (name, raw) => {
    if (raw === undefined || raw === '') return fallback
    if (!/^0x[0-9a-fA-F]{40}$/.test(raw)) throw new ConfigError(`${name} must be a 0x address`)
    return raw as `0x${string}`
  }

/** Without its trailing slashes; null when unset. */
export const url: Reader<string | null> = (name, raw) => {
  if (raw === undefined || raw === '') return null
  try {
    const parsed = new URL(raw)
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error()
    return raw.replace(/\/+$/, '')
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL`)
  }
}

/** A PostgreSQL URL; null when unset. Its refusal never repeats the text, which may hold a password. */
export const postgresUrl: Reader<string | null> = (name, raw) => {
  if (raw === undefined || raw === '') return null
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be a postgres:// URL (postgres://user:password@host:port/database)`)
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new ConfigError(`${name} must be a postgres:// URL, got a ${parsed.protocol} one`)
  if (!parsed.hostname || parsed.pathname.length < 2)
    throw new ConfigError(`${name} must name a host and a database (postgres://user:password@host:port/database)`)
  return raw
}

/** One or more PostgreSQL URLs, comma-separated (read replicas); empty when unset. */
export const postgresUrls: Reader<string[]> = (name, raw) =>
  (raw ?? '')
    .split(',')
    .map((piece) => piece.trim())
    .filter((piece) => piece !== '')
    .map((piece) => postgresUrl(name, piece)!)

/** An address or a name to listen on, checked here: Bun's own error for a malformed one does not name it. */
export const bindHost: Reader<string> = (name, raw) => {
  if (raw === undefined || raw === '') return '127.0.0.1'
  const hostname = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i
  if (!isIP(raw) && !hostname.test(raw)) throw new ConfigError(`${name} must be an IP address or a host name, got "${raw}"`)
  return raw
}

/** Whether the bind address is every interface's. */
export const isWildcardHost = (host: string) => host === '0.0.0.0' || host === '::'
/** A bind address as a URL's host: IPv6 in brackets; every-interface as `wildcard`, a name that reaches this machine. */
export const urlHost = (host: string, wildcard = 'localhost') => (isWildcardHost(host) ? wildcard : host.includes(':') ? `[${host}]` : host)

/**
 * An S3-compatible bucket for content blocks: `s3://bucket[/prefix][?endpoint=…&region=…&virtual_hosted_style=1]`.
 * Credentials come from the environment, as Bun's S3 client reads them (S3_ACCESS_KEY_ID / AWS_ACCESS_KEY_ID, and
 * the secret beside it), never from the URL, so no message or process list shows them.
 */
export interface S3Place {
  kind: 's3'
  bucket: string
  prefix: string
  endpoint: string | null
  region: string | null
  virtualHostedStyle: boolean
  url: string
}

const S3_OPTIONS = new Set(['endpoint', 'region', 'virtual_hosted_style'])

export const contentPlace: Reader<'leveldb' | 'postgres' | S3Place | null> = (name, raw) => {
  if (raw === undefined || raw === '') return null
  if (raw === 'leveldb' || raw === 'postgres') return raw
  const shape = `${name} must be leveldb, postgres or s3://bucket/prefix?endpoint=…&region=…`
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(shape)
  }
  if (parsed.protocol !== 's3:' || !parsed.hostname) throw new ConfigError(shape)
  if (parsed.username || parsed.password)
    throw new ConfigError(`${name} must not hold the S3 credentials: give them in the environment (S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY)`)
  for (const key of parsed.searchParams.keys())
    if (!S3_OPTIONS.has(key)) throw new ConfigError(`${name} has an unknown option ${key} (known: ${[...S3_OPTIONS].join(', ')})`)
  const endpoint = parsed.searchParams.get('endpoint')
  if (endpoint !== null && !/^https?:\/\/[^/]/.test(endpoint)) throw new ConfigError(`${name} needs an http:// or https:// endpoint`)
  const prefix = decodeURIComponent(parsed.pathname.replace(/^\/+/, '').replace(/\/*$/, ''))
  return {
    kind: 's3',
    bucket: parsed.hostname,
    prefix: prefix ? `${prefix}/` : '',
    endpoint,
    region: parsed.searchParams.get('region'),
    virtualHostedStyle: parsed.searchParams.get('virtual_hosted_style') === '1',
    url: raw,
  }
}
