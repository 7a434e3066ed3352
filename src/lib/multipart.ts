// A streaming multipart/form-data parser (RFC 7578 over RFC 2046): the body is pushed chunk by chunk, and each part's
// bytes are handed on as views of the chunks they came in, so a large file part is never held. Bun's own
// Request.formData() reads the whole body first; busboy's last release without dicer is not installed, and the one
// that is (0.3, a test server's) crashes on a folded header line (GHSA-wm7h-9275-46v2). Only what a form sends is
// read: each part's Content-Disposition (form-data, its name and filename) and Content-Type; every other header
// is checked for syntax and ignored.

/** Something the body breaks: not a multipart body, or not a whole one. */
export class MultipartError extends Error {}

export interface PartHead {
  name: string
  /** null for a field; a file part has one, possibly empty (a browser's file input left empty sends ""). */
  filename: string | null
  /** The part's Content-Type as sent, or null. */
  type: string | null
}

export interface PartHandler {
  part(head: PartHead): void
  /** A piece of the current part: a view of a pushed chunk (or a small copy), never reused by the parser. */
  data(bytes: Uint8Array): void
  partEnd(): void
}

export interface MultipartLimits {
  /** Bytes of one part's header block. */
  headerBytes: number
  parts: number
}

const CR = 0x0d
const LF = 0x0a
const DASH = 0x2d
const CRLF_CRLF = Buffer.from('\r\n\r\n')
// RFC 2046 bchars, 1 to 70 of them, not ending in a space. None is CR: a delimiter's CR is its first byte only.
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** The boundary of a multipart/form-data Content-Type, or null when the type is another or names none (or a bad one). */
export function boundaryOf(contentType: string): string | null {
  const [type, ...params] = contentType.split(';')
  if (type!.trim().toLowerCase() !== 'multipart/form-data') return null
  for (const param of params) {
    const m = /^\s*boundary\s*=\s*(?:"([^"]*)"|([^\s"]*))\s*$/i.exec(param)
    if (m) return BOUNDARY.test(m[1] ?? m[2]!) ? (m[1] ?? m[2]!) : null
  }
  return null
}

/** `; name=value` parameters of a header value (values quoted or not; a quoted one may hold `\"`). */
function parameters(text: string): { value: string; params: Map<string, string> } {
  const first = text.indexOf(';')
  const value = (first < 0 ? text : text.slice(0, first)).trim().toLowerCase()
  const params = new Map<string, string>()
  const PARAM = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]*))\s*/y
  for (let at = first < 0 ? text.length : first; at < text.length; ) {
    if (/^;\s*$/.test(text.slice(at))) break // a trailing ";"
    PARAM.lastIndex = at
    const m = PARAM.exec(text)
    if (!m) throw new MultipartError(`a part header's parameters cannot be read: ${JSON.stringify(text.slice(0, 100))}`)
    const name = m[1]!.toLowerCase()
    if (params.has(name)) throw new MultipartError(`a part header names ${name} twice`)
    params.set(name, m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!)
    at = PARAM.lastIndex
  }
  return { value, params }
}

function partHead(block: Uint8Array): PartHead {
  const lines: string[] = []
  for (const line of new TextDecoder().decode(block).split('\r\n')) {
    if (line === '') throw new MultipartError('a part header line is empty')
    if (line[0] === ' ' || line[0] === '\t') {
      // obsolete line folding: the line goes on (the first line cannot be one)
      if (lines.length === 0) throw new MultipartError('a part begins with a folded header line')
      lines[lines.length - 1] += ` ${line.trim()}`
    } else lines.push(line)
  }
  let disposition: string | null = null
  let type: string | null = null
  for (const line of lines) {
    const colon = line.indexOf(':')
    const name = colon < 0 ? '' : line.slice(0, colon).toLowerCase()
    if (!TOKEN.test(name)) throw new MultipartError(`a part header line cannot be read: ${JSON.stringify(line.slice(0, 100))}`)
    const value = line.slice(colon + 1).trim()
    if (name !== 'content-disposition' && name !== 'content-type') continue
    if ((name === 'content-type' ? type : disposition) !== null) throw new MultipartError(`a part has two ${name} headers`)
    if (name === 'content-type') type = value
    else disposition = value
  }
  if (disposition === null) throw new MultipartError('a part has no Content-Disposition')
  const { value, params } = parameters(disposition)
  const name = params.get('name')
  if (value !== 'form-data' || name === undefined) throw new MultipartError('a part is not form-data with a name')
  return { name, filename: params.get('filename') ?? null, type }
}

/**
 * A parser for one body. push() its chunks in order, then end(): the handler hears each part's head, its bytes and
 * its end, synchronously. Anything malformed or missing (no closing delimiter: a truncated body) throws a
 * MultipartError; so does a handler's own error, as it is thrown.
 */
export function multipartParser(boundary: string, handler: PartHandler, limits: MultipartLimits) {
  if (!BOUNDARY.test(boundary)) throw new MultipartError('the boundary is not 1 to 70 allowed characters')
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  let state: 'preamble' | 'after' | 'head' | 'body' | 'epilogue' = 'preamble'
  // A prefix of the delimiter at the end of the last chunk (it starts with CR). The body is read as if a CRLF came
  // first, so a delimiter on the very first line is found like any other.
  let carry: Uint8Array = Buffer.from('\r\n')
  let after = '' // the bytes after a delimiter, until its line ends
  let head: Uint8Array = Buffer.from('\r\n') // the header block so far, read as if after a CRLF (an empty one ends at once)
  let parts = 0

  const view = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const found = () => {
    if (state === 'body') handler.partEnd()
    state = 'after'
    after = ''
  }

  /** Bytes that are content (a part's, or the preamble's: dropped) up to the next delimiter; returns where it ended. */
  function scan(chunk: Uint8Array, from: number): number {
    const emit = (bytes: Uint8Array) => {
      if (bytes.byteLength > 0 && state === 'body') handler.data(bytes)
    }
    if (carry.byteLength > 0) {
      const need = delimiter.byteLength - carry.byteLength
      const seen = Math.min(need, chunk.byteLength - from)
      if (view(chunk).compare(delimiter, carry.byteLength, carry.byteLength + seen, from, from + seen) === 0) {
        if (seen < need) return ((carry = Buffer.concat([carry, chunk.subarray(from)])), chunk.byteLength)
        carry = new Uint8Array()
        found()
        return from + need
      }
      emit(carry) // not a delimiter after all; none starts inside it (only its first byte is a CR)
      carry = new Uint8Array()
    }
    const at = view(chunk).indexOf(delimiter, from)
    if (at >= 0) {
      emit(chunk.subarray(from, at))
      found()
      return at + delimiter.byteLength
    }
    // Keep back the longest end of the chunk that begins the delimiter.
    let keep = chunk.byteLength
    for (let i = Math.max(from, chunk.byteLength - delimiter.byteLength + 1); i < chunk.byteLength; i++) {
      if (chunk[i] === CR && view(chunk).compare(delimiter, 0, chunk.byteLength - i, i) === 0) {
        keep = i
        break
      }
    }
    emit(chunk.subarray(from, keep))
    carry = chunk.slice(keep)
    return chunk.byteLength
  }

  /** The rest of a delimiter's line: "--" ends the body, else optional spaces and CRLF begin a part's headers. */
  function afterDelimiter(chunk: Uint8Array, from: number): number {
    let at = from
    while (at < chunk.byteLength) {
      const byte = chunk[at++]!
      if (after === '' && byte === DASH) after = '-'
      else if (after === '-') {
        if (byte !== DASH) throw new MultipartError('a delimiter is followed by a single "-"')
        state = 'epilogue'
        return chunk.byteLength
      } else if (byte === CR && !after.endsWith('\r')) after += '\r'
      else if (byte === LF && after.endsWith('\r')) {
        if (++parts > limits.parts) throw new MultipartError(`more than ${limits.parts} parts`)
        state = 'head'
        head = Buffer.from('\r\n')
        return at
      } else if ((byte === 0x20 || byte === 0x09) && !after.endsWith('\r') && after.length < 64) after += ' '
      else throw new MultipartError('a delimiter line has more after the boundary')
    }
    return at
  }

  function readHead(chunk: Uint8Array, from: number): number {
    const take = Math.min(chunk.byteLength - from, limits.headerBytes + 4 - head.byteLength)
    const joined = Buffer.concat([head, chunk.subarray(from, from + take)])
    const end = joined.indexOf(CRLF_CRLF)
    if (end < 0) {
      if (take < chunk.byteLength - from || joined.byteLength > limits.headerBytes + 3)
        throw new MultipartError(`a part's headers are longer than ${limits.headerBytes} bytes`)
      head = joined
      return chunk.byteLength
    }
    if (end === 0) throw new MultipartError('a part has no headers')
    const used = end + 4 - head.byteLength
    handler.part(partHead(joined.subarray(2, end)))
    state = 'body'
    return from + used
  }

  return {
    push(chunk: Uint8Array): void {
      for (let at = 0; at < chunk.byteLength; ) {
        if (state === 'epilogue') return // whatever follows the closing delimiter is ignored
        if (state === 'after') at = afterDelimiter(chunk, at)
        else if (state === 'head') at = readHead(chunk, at)
        else at = scan(chunk, at)
      }
    },
    /** The body ended: it must have ended with its closing delimiter. */
    end(): void {
      if (state !== 'epilogue') throw new MultipartError('the body ends before its closing delimiter')
    },
  }
}
