// A multipart/form-data body whose one file part streams out while the body arrives (a 37.5 MiB upload is never held),
// its other parts read as text under small limits, then turned into the JSON form's shape by the route's own schema:
// one validation for both forms.
import type { TSchema } from '@sinclair/typebox'
import { DomainError } from '../domain/errors.ts'
import { boundaryOf, MultipartError, multipartParser, type PartHead } from '../lib/multipart.ts'
import { bodyTooLarge } from './body.ts'

export interface FormLimits {
  /** Bytes of the whole body. */
  body: number
  /** Bytes of the file part's content. */
  file: number
  /** Bytes of one text part, and of all of them. */
  field: number
  fields: number
  parts: number
}

export interface FileSink {
  /** The next piece of the file: a view of the body as it came, not reused by the reader. */
  push(piece: Uint8Array): void
  /** When it returns a promise, the body is not read further until it settles (a sink that cannot keep up). */
  ready?(): Promise<void> | undefined
}

export interface FormRead {
  /** Each text part's value (UTF-8, a bad sequence replaced), by name, in the order sent. */
  fields: Map<string, string[]>
  file: (PartHead & { size: number }) | null
}

const PART_HEADER_BYTES = 8 * 1024

/** True for a multipart/form-data body (whatever its boundary says). */
export const isFormData = (contentType: string | null) => /^\s*multipart\/form-data\s*(;|$)/i.test(contentType ?? '')

export const invalidForm = (details: string) =>
  new DomainError('INVALID_PARAMETER', 'request body is not a valid multipart/form-data body', details)

/**
 * Reads the body under `limits`. The part named `file` must be a file part (one with a filename), sent once: its
 * bytes go to `sink` as they arrive, and its problems are answered with `fileCode`; no other part may be a file.
 * `progress` hears the bytes read so far, after each chunk.
 */
export async function readFormStreamingFile(
  request: Request,
  limits: FormLimits,
  file: string,
  options: { sink: FileSink; fileCode: string; progress?: (bytes: number) => void },
): Promise<FormRead> {
  const boundary = boundaryOf(request.headers.get('content-type') ?? '')
  if (boundary === null) throw invalidForm('the Content-Type has no valid boundary parameter')
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limits.body) throw bodyTooLarge(limits.body)
  const fields = new Map<string, string[]>()
  let found: FormRead['file'] = null
  let into: 'file' | 'field' = 'field'
  let name = ''
  let text: Uint8Array[] = []
  let textBytes = 0
  let fieldsBytes = 0
  const fileProblem = (error: string) => new DomainError(options.fileCode, error)

  const parser = multipartParser(
    boundary,
    {
      part(head) {
        if (head.name === file) {
          if (head.filename === null) throw fileProblem(`${file} must be a file part (with a filename): curl -F ${file}=@path`)
          if (found) throw fileProblem(`${file} is sent twice`)
          found = { ...head, size: 0 }
          into = 'file'
        } else if (head.filename !== null) {
          throw invalidForm(`${head.name} is a file part: only ${file} is a file`)
        } else {
          into = 'field'
          name = head.name
          text = []
          textBytes = 0
        }
      },
      data(bytes) {
        if (into === 'file') {
          found!.size += bytes.byteLength
          if (found!.size > limits.file) throw new DomainError('PAYLOAD_TOO_LARGE', `${file} is larger than ${limits.file} bytes`)
          options.sink.push(bytes)
          return
        }
        textBytes += bytes.byteLength
        fieldsBytes += bytes.byteLength
        if (textBytes > limits.field) throw new DomainError('PAYLOAD_TOO_LARGE', `the part ${name} is larger than ${limits.field} bytes`)
        if (fieldsBytes > limits.fields)
          throw new DomainError('PAYLOAD_TOO_LARGE', `the parts besides ${file} are larger than ${limits.fields} bytes together`)
        text.push(bytes.slice())
      },
      partEnd() {
        if (into === 'file') return
        const value = new TextDecoder().decode(Buffer.concat(text, textBytes))
        fields.set(name, [...(fields.get(name) ?? []), value])
      },
    },
    { headerBytes: PART_HEADER_BYTES, parts: limits.parts },
  )

  const reader = request.body?.getReader()
  let total = 0
  try {
    for (;;) {
      const next = reader ? await reader.read().catch(() => null) : { done: true as const, value: undefined }
      if (next === null) throw invalidForm('the body could not be read to its end')
      if (next.done) break
      total += next.value.byteLength
      if (total > limits.body) throw bodyTooLarge(limits.body)
      parser.push(next.value)
      options.progress?.(total)
      const wait = options.sink.ready?.()
      if (wait) await wait
    }
    parser.end()
  } catch (error) {
    await reader?.cancel().catch(() => {})
    throw error instanceof MultipartError ? invalidForm(error.message) : error
  }
  return { fields, file: found }
}

type Schema = TSchema & { type?: string; anyOf?: Schema[]; items?: Schema; properties?: Record<string, Schema> }

/** The JSON types a schema takes, looking through its choices (Nullable, a string or an integer). */
function typesOf(schema: Schema | undefined): Set<string> {
  const types = new Set<string>()
  const walk = (s: Schema | undefined) => {
    if (s?.anyOf) s.anyOf.forEach(walk)
    else if (typeof s?.type === 'string') types.add(s.type)
  }
  walk(schema)
  return types
}

/**
 * A text part's value as the JSON form would carry it, by what the schema takes there: a string as it is; for a
 * field that takes no string, an empty value is no value (a form's empty box), true/false a boolean, digits an
 * integer, and JSON text an object. Anything else stays text, for the schema to refuse with the field's own code.
 */
function jsonValueOf(text: string, schema: Schema | undefined): unknown {
  const types = typesOf(schema)
  if (schema === undefined || types.has('string')) return text
  if (text === '') return undefined
  if (types.has('boolean') && (text === 'true' || text === 'false')) return text === 'true'
  if ((types.has('integer') || types.has('number')) && /^-?\d{1,16}$/.test(text)) return Number(text)
  if (types.has('object')) {
    try {
      const parsed = JSON.parse(text)
      if (parsed === null || typeof parsed === 'object') return parsed
    } catch {
      // not JSON: refused as text
    }
  }
  return text
}

/**
 * The fields of a form as the JSON form of `schema` (an object) carries them. A field the schema takes a list for is
 * repeated (`-F tags=a -F tags=b`; an empty one adds nothing); any other sent twice is passed as a list (for the
 * schema to refuse). An object field is JSON text (`-F 'price={"amount":"5"}'`) or one part per property
 * (`price.amount`: what an HTML form can send), not both.
 */
export function formBody(schema: Schema, fields: Map<string, string[]>): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  const properties = schema.properties ?? {}
  const objectOf = (s: Schema | undefined) => (s?.anyOf ?? [s]).find((choice) => choice?.type === 'object')
  for (const [name, values] of fields) {
    const dot = name.indexOf('.')
    const outer = dot < 0 ? undefined : objectOf(properties[name.slice(0, dot)])
    if (outer) {
      const [key, inner] = [name.slice(0, dot), name.slice(dot + 1)]
      if (fields.has(key)) throw invalidForm(`${key} is sent both whole and by its properties`)
      const value = values.length === 1 ? jsonValueOf(values[0]!, outer.properties?.[inner]) : values
      if (value !== undefined && value !== '') body[key] = { ...(body[key] as object | undefined), [inner]: value }
      continue
    }
    const field = properties[name]
    if (typesOf(field).has('array')) {
      const items = values.filter((v) => v !== '').map((v) => jsonValueOf(v, field?.items))
      if (items.length > 0) body[name] = items
      continue
    }
    const value = values.length === 1 ? jsonValueOf(values[0]!, field) : values
    if (value !== undefined) body[name] = value
  }
  return body
}
