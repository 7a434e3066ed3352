// A JSON body whose one large string field streams out while the body arrives: a 50 MB content_base64 is decoded
// piece by piece and never held as text. Everything else of the body is parsed by JSON.parse, with that field's
// value left as "" (the parse still checks the whole syntax; the string's own escapes are checked here).
import { DomainError } from '../domain/errors.ts'
import { bodyTooLarge, parseJsonBytes } from './body.ts'

export interface TextSink {
  /** Returns false once the text is known to be unusable (then only control characters are still looked for). */
  push(text: string): boolean
  end(): void
  /** When it returns a promise, the body is not read further until it settles (a sink that cannot keep up). */
  ready?(): Promise<void> | undefined
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const ESCAPED: Record<number, string> = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' }
const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09
const CONTROL = /[\x00-\x1f]/
const invalidJson = () => new DomainError('INVALID_JSON', 'request body is not valid JSON')

/**
 * Reads the body under `limit` bytes. The value of `field` in the top-level object, when it is a string written
 * with its plain name, goes to `sink` as it arrives. `streamed` is false when it did not (no such field, a name
 * written with escapes, or the field given twice: JSON keeps the last one, which is then in `body`).
 */
export async function readJsonStreamingField(
  request: Request,
  limit: number,
  field: string,
  sink: TextSink,
): Promise<{ body: unknown; streamed: boolean }> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw bodyTooLarge(limit)
  const name = new TextEncoder().encode(field)
  const utf8 = new TextDecoder() // the streamed string's text; not fatal, like the decode of a whole body
  const rest: Uint8Array[] = [] // the body without the streamed string's contents
  let restLength = 0
  let total = 0
  // Outside the streamed string:
  let depth = 0
  let inString = false
  let escaped = false
  let matched = -1 // bytes of `field` matched by the current depth-1 string so far, -1 when it cannot match
  let keyFound = false // a depth-1 string equal to `field` just closed
  let awaitingColon = false
  let awaitingValue = false
  let occurrences = 0
  // Inside it:
  let streaming = false
  let streamedOnce = false
  let usable = true
  let pendingEscape: string | null = null // after a backslash: what followed so far
  let syntaxError = false

  const keep = (chunk: Uint8Array, from: number, to: number) => {
    if (to <= from) return
    rest.push(chunk.slice(from, to))
    restLength += to - from
  }
  /** `raw`: the text is the body's own bytes (not an escape's result), where a control character is a JSON error. */
  const emit = (text: string, raw: boolean) => {
    usable = sink.push(text) && usable
    if (raw && !usable && CONTROL.test(text)) syntaxError = true
  }
  /** A character cut short by a backslash or the closing quote becomes U+FFFD, as in a decode of the whole body. */
  const endText = () => {
    const unfinished = utf8.decode()
    if (unfinished) emit(unfinished, false)
  }
  function escapeByte(byte: number) {
    if (pendingEscape === '') {
      if (byte === 0x75) pendingEscape = 'u'
      else if (ESCAPED[byte] !== undefined) {
        emit(ESCAPED[byte]!, false)
        pendingEscape = null
      } else syntaxError = true
      return
    }
    pendingEscape += String.fromCharCode(byte)
    if (pendingEscape!.length < 5) return
    if (!/^u[0-9a-fA-F]{4}$/.test(pendingEscape!)) syntaxError = true
    else emit(String.fromCharCode(Number.parseInt(pendingEscape!.slice(1), 16)), false)
    pendingEscape = null
  }

  function scan(chunk: Uint8Array) {
    let keptFrom = streaming ? -1 : 0
    let i = 0
    while (i < chunk.length && !syntaxError) {
      if (streaming) {
        if (pendingEscape !== null) {
          escapeByte(chunk[i++]!)
          continue
        }
        const quote = chunk.indexOf(QUOTE, i)
        const backslash = chunk.indexOf(BACKSLASH, i)
        const stop = quote < 0 ? (backslash < 0 ? chunk.length : backslash) : backslash < 0 ? quote : Math.min(quote, backslash)
        if (stop > i) emit(utf8.decode(chunk.subarray(i, stop), { stream: true }), true)
        i = stop
        if (i === chunk.length) break
        if (chunk[i] === BACKSLASH) {
          endText()
          pendingEscape = ''
          i++
          continue
        }
        streaming = false
        endText()
        sink.end()
        keptFrom = i++ // the closing quote stays in the rest
        continue
      }
      const byte = chunk[i++]!
      if (inString) {
        if (escaped) escaped = false
        else if (byte === BACKSLASH) (escaped = true), (matched = -1)
        else if (byte === QUOTE) {
          inString = false
          keyFound = matched === name.length
          awaitingColon = keyFound
        } else if (matched >= 0) matched = matched < name.length && byte === name[matched] ? matched + 1 : -1
        continue
      }
      if (isSpace(byte)) continue
      if (awaitingValue) {
        awaitingValue = false
        if (byte === QUOTE && !streamedOnce) {
          streaming = streamedOnce = true
          keep(chunk, keptFrom, i)
          keptFrom = -1
          continue
        }
      }
      if (awaitingColon && byte === 0x3a) occurrences++, (awaitingValue = true)
      awaitingColon = keyFound = false
      if (byte === QUOTE) (inString = true), (matched = depth === 1 ? 0 : -1)
      else if (byte === 0x7b || byte === 0x5b) depth++
      else if (byte === 0x7d || byte === 0x5d) depth--
    }
    if (keptFrom >= 0) keep(chunk, keptFrom, chunk.length)
  }

  if (request.body) {
    const reader = request.body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      if (total > limit) {
        await reader.cancel().catch(() => {})
        throw bodyTooLarge(limit)
      }
      scan(value)
      const wait = sink.ready?.()
      if (wait) {
        try {
          await wait
        } catch (error) {
          await reader.cancel().catch(() => {})
          throw error
        }
      }
    }
  }
  if (total === 0) return { body: undefined, streamed: false }
  if (syntaxError || streaming) throw invalidJson()
  const body = parseJsonBytes(rest.length === 1 ? rest[0]! : Buffer.concat(rest, restLength))
  return { body, streamed: streamedOnce && occurrences === 1 }
}
