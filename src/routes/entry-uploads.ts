// The create-entry body, in either form: JSON with the content in base64 (content_base64 decoded while the body
// arrives), or multipart/form-data with the content as a file part (`curl -F content=@file`). Both become the one
// body the route's schema validates, and a large upload's content is written to a file as it arrives (spool.ts).
import type { NewEntryInput } from '../domain/entries.ts'
import { CreateEntry, MAX_CONTENT_BASE64_CHARS, MAX_CONTENT_BYTES } from '../models/index.ts'
import { isUuid } from '../lib/ids.ts'
import { memoryGuard } from '../lib/memory-guard.ts'
import type { Services } from './services.ts'
import type { BodyReader } from './wallet-auth.ts'
import { beforeErrorAnswer } from '../edge/errors.ts'
import { readJsonStreamingField } from '../edge/json-field-stream.ts'
import { formBody, invalidForm, isFormData, readFormStreamingFile } from '../edge/form-body.ts'
import { DomainError } from '../domain/errors.ts'
import { base64Decoder, contentOfBytes, type Base64Content } from '../domain/base64.ts'
import type { ContentWriter } from '../content/store.ts'

// The base64 text may be 50 MB; the rest of the JSON is small.
export const ENTRY_BODY_LIMIT = MAX_CONTENT_BASE64_CHARS + 256 * 1024
/** A form's parts besides its content: the JSON form's fields, each well under 64 KiB even at 4 bytes a character. */
const FORM_LIMITS = { file: MAX_CONTENT_BYTES, field: 64 * 1024, fields: 256 * 1024, parts: 64 }
const FORM_BODY_LIMIT = MAX_CONTENT_BYTES + FORM_LIMITS.fields + FORM_LIMITS.parts * 9 * 1024 // parts' heads: 8 KiB each
/** What the content's problems are answered with in either form: the JSON form's code for content_base64. */
const CONTENT_CODE = (CreateEntry as unknown as { 'x-field-codes': Record<string, string> })['x-field-codes'].content_base64!

/** Uploads whose content was read while the body arrived (content_base64 is "" in the parsed body). */
const uploads = new WeakMap<Request, Pick<NewEntryInput, 'content' | 'arrived'>>()
export const uploadOf = (request: Request) => uploads.get(request)

/** An upload refused (by the schema, the rules or a failure) has its file removed before the answer is sent. */
const discardUpload = (request: Request) => async () =>
  void (await uploads.get(request)?.arrived?.then(
    (arrived) => arrived.discard(),
    () => {},
  ))

/** A writer given up, the error answer sent only once its file is gone. */
const abandon = (request: Request, writer: ContentWriter, error: Error) => {
  const gone = writer.abort(error)
  beforeErrorAnswer(request, () => gone)
}

/** Bodies this large have their content written to a file while they arrive; smaller ones are read whole. */
const SPOOL_WHILE_READING_BYTES = 4 * 1024 * 1024
/**
 * An upload's RSS growth while its body is read (see memoryGuard): a JSON body's near 1.25 times its decoded size (3/4
 * of the body). A form holds a few MiB live (the writer's queue), and its body arrives fast, as its garbage: collected
 * at a quarter of its size, so the import that follows does not find all of it still there (a growth of about twice
 * the payload, measured, against about one).
 */
const MEMORY_BUDGET_PER_BODY_BYTE = { json: 0.75 * 1.25, form: 0.25 }

type Signed = Parameters<BodyReader>[2]

/** A writer for the content when the body is large (or of unknown length) and the signer may add to the feed. */
async function writerFor(s: Services, declared: number, { signer, params }: Signed): Promise<ContentWriter | null> {
  const large = !Number.isSafeInteger(declared) || declared >= SPOOL_WHILE_READING_BYTES
  return large && isUuid(params.feed_id) ? await s.entries.contentWriter(signer, params.feed_id.toLowerCase()) : null
}

async function readJsonEntry(s: Services, request: Request, limit: number, signed: Signed): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  const known = Number.isSafeInteger(declared)
  const writer = known ? await writerFor(s, declared, signed) : null // an unknown length is read whole
  const decoder = base64Decoder(known ? declared : undefined, writer?.push) // the body bounds the field
  const guard = writer ? memoryGuard(declared * MEMORY_BUDGET_PER_BODY_BYTE.json, signed.rssAtArrival) : null
  let pushed = 0
  const push = (text: string) => ((pushed += text.length), decoder.push(text))
  const ready = writer && guard ? () => (guard(pushed), writer.ready()) : undefined
  let content: Base64Content | null = null
  let read: Awaited<ReturnType<typeof readJsonStreamingField>>
  try {
    read = await readJsonStreamingField(request, limit, 'content_base64', { push, end: () => void (content = decoder.end()), ready })
  } catch (error) {
    if (writer) abandon(request, writer, error as Error)
    throw error
  }
  const decoded = read.streamed ? (content as Base64Content | null) : null
  if (decoded) uploads.set(request, { content: decoded, arrived: writer && decoded.pieces ? writer.end() : undefined })
  if (writer && !decoded?.pieces) abandon(request, writer, new Error('no valid content_base64 streamed'))
  else if (writer) beforeErrorAnswer(request, discardUpload(request)) // a stored entry has read (and so removed) its file
  return read.body
}

/**
 * A form: its `content` part streams to the writer (or, small, into memory), its other parts become the JSON form's
 * fields (formBody), and mime_type, when not sent, is the content part's Content-Type.
 */
async function readFormEntry(s: Services, request: Request, signed: Signed): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  const writer = await writerFor(s, declared, signed)
  const budget = (Number.isSafeInteger(declared) ? declared : FORM_BODY_LIMIT) * MEMORY_BUDGET_PER_BODY_BYTE.form
  const guard = writer ? memoryGuard(budget, signed.rssAtArrival) : undefined
  const pieces: Uint8Array[] = []
  const sink = writer ?? { push: (piece: Uint8Array) => void pieces.push(piece) }
  let form: Awaited<ReturnType<typeof readFormStreamingFile>>
  try {
    form = await readFormStreamingFile(request, { ...FORM_LIMITS, body: FORM_BODY_LIMIT }, 'content', {
      sink,
      fileCode: CONTENT_CODE,
      progress: guard,
    })
    if (!form.file) throw new DomainError(CONTENT_CODE, 'the content part is missing: send the content as a file part named content')
  } catch (error) {
    if (writer) abandon(request, writer, error as Error)
    throw error
  }
  uploads.set(request, { content: contentOfBytes(pieces, form.file.size), arrived: writer?.end() })
  if (writer) beforeErrorAnswer(request, discardUpload(request))
  const body = formBody(CreateEntry, form.fields)
  if ('content_base64' in body) throw invalidForm('content_base64 is for JSON bodies: a form sends its content as the part content')
  const type = body.mime_type ?? form.file.type ?? undefined
  return { ...body, content_base64: '', ...(type === undefined ? {} : { mime_type: type }) }
}

/** The create-entry body reader: a form, or (whatever else Content-Type says: curl users forget it) JSON. */
export const entryBodyReader =
  (s: Services): BodyReader =>
  async (request, limit, signed) => {
    const type = request.headers.get('content-type')
    if (isFormData(type)) return readFormEntry(s, request, signed)
    // Another multipart type (mixed, related) is no form; a URL-encoded type stays JSON's (curl -d sends it by default).
    if (/^\s*multipart\//i.test(type ?? ''))
      throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'send the entry as JSON or as multipart/form-data')
    return readJsonEntry(s, request, limit, signed)
  }
