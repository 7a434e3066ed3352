// Error → status and body. Shape A {error, code, details?} everywhere; shape B for feed create/update validation.
import { Elysia, ValidationError } from 'elysia'
import { DomainError } from '../domain/errors.ts'
import { isStoreUnavailable } from '../lib/store-faults.ts'
import { holdsNul } from '../lib/text.ts'

export const STATUS: Record<string, number> = {
  INVALID_AUTH_HEADERS: 400,
  CONTENT_IMMUTABLE: 400,
  INVALID_PARAMETER: 400,
  INVALID_WALLET_ID: 400,
  INVALID_JSON: 400,
  invalid_request: 400,
  UNSUPPORTED_MIME_TYPE: 400,
  INVALID_WEBHOOK_URL: 400,
  INVALID_WEBSUB_REQUEST: 400,
  INVALID_HOST: 400,
  INVALID_PRICE: 400,
  INVALID_BASE64: 400,
  INVALID_EXPIRES_AT: 400,
  INVALID_USERNAME: 400,
  AUTH_REQUIRED: 401,
  NONCE_EXPIRED: 401,
  INVALID_NONCE: 401,
  INVALID_SIGNATURE: 401,
  TIMESTAMP_OUT_OF_RANGE: 401,
  UNAUTHORIZED: 403,
  PASS_REQUIRED: 403,
  PASS_EXPIRED: 403,
  UNAUTHORIZED_WALLET_UPDATE: 403,
  CROSS_SITE_REQUEST: 403,
  STUDIO_SESSION_INVALID: 403,
  INVALID_CSRF_TOKEN: 403,
  FEED_LIMIT_REACHED: 403,
  WEBHOOK_LIMIT_REACHED: 403,
  ENTRY_LIMIT_REACHED: 403,
  INVALID_ACCESS_TOKEN: 403,
  ACCESS_LINK_EXHAUSTED: 410,
  ACCESS_LINK_EXPIRED: 410,
  ACCESS_LINK_REVOKED: 410,
  ACCESS_LINK_NOT_FOUND: 404,
  PASS_NOT_FOUND: 404,
  FEED_URL_NOT_FOUND: 404,
  FEED_URL_REVOKED: 410,
  ADMIN_KEY_REQUIRED: 401,
  CATEGORY_CONFLICT: 409,
  INVALID_PICTURE_URL: 400,
  NOT_FOUND: 404,
  FEED_NOT_FOUND: 404,
  ENTRY_NOT_FOUND: 404,
  WALLET_NOT_FOUND: 404,
  CATEGORY_NOT_FOUND: 404,
  CONTENT_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  ALREADY_TAKEN_DOWN: 409,
  NOT_TAKEN_DOWN: 409,
  TAKEN_DOWN: 451,
  FEED_INACTIVE: 409,
  OWNER_NEEDS_NO_PASS: 409,
  ENTRY_CONTENT_PUBLIC: 409,
  USERNAME_CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  INVALID_PAGE_TOKEN: 422,
  RATE_LIMITED: 429,
  WEBSUB_BUSY: 429,
  INTERNAL_ERROR: 500,
  PAYMENT_BACKEND_UNAVAILABLE: 502,
  PAYMENT_PENDING: 503,
  SERVICE_UNAVAILABLE: 503,
}

/** Seconds a client waits before retrying when a store cannot be reached: a database restart takes a few. */
export const UNAVAILABLE_RETRY_S = 5

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } })

export const errorResponse = (code: string, error: string, details?: string) =>
  json(STATUS[code] ?? 400, details === undefined ? { error, code } : { error, code, details })

export const shapeB = (message: string, field: string) => json(400, { error: 'invalid_request', message, details: { field } })

/**
 * The first failing field of a TypeBox validation error, as a name and a one-line reason. A string (or list of them)
 * holding NUL is refused for that, whatever else its schema says (models/common.ts noNul): the reason names it.
 */
export function describeValidation(error: ValidationError): { field: string; message: string } {
  const first = error.valueError
  const field = (first?.path ?? '').replace(/^\//, '').replace(/\//g, '.') || error.type
  if ((typeof first?.value === 'string' || Array.isArray(first?.value)) && holdsNul(first.value))
    return { field, message: `${field} must not contain NUL (U+0000)` }
  const reason = first?.schema?.error ?? first?.message ?? 'is invalid'
  return { field, message: field ? `${field}: ${String(reason).toLowerCase()}` : String(reason) }
}

export function toErrorResponse(error: unknown, code: string | number, log: (e: unknown) => void): Response {
  // Errors thrown by our parse hooks (auth, body limits) arrive wrapped in Elysia's ParseError.
  if (code === 'PARSE' && (error as Error).cause instanceof DomainError) error = (error as Error).cause
  if (error instanceof DomainError) {
    if (error.code === 'invalid_request') return shapeB(error.message, error.details ?? '')
    const answer = errorResponse(error.code, error.message, error.details)
    if (error.retryAfterS !== undefined) answer.headers.set('retry-after', String(error.retryAfterS))
    return answer
  }
  if (error instanceof ValidationError) {
    // An answer that breaks its own schema is our fault, never the client's.
    if (error.type === 'response') return (log(error), errorResponse('INTERNAL_ERROR', 'internal error'))
    return validationResponse(error)
  }
  if (error instanceof URIError)
    return errorResponse('INVALID_PARAMETER', 'malformed URL', 'the path or query has invalid percent-encoding')
  if (isStoreUnavailable(error)) {
    log(error)
    const body = { error: 'service unavailable: the database cannot be reached; retry shortly', code: 'SERVICE_UNAVAILABLE' }
    return json(503, body, { 'retry-after': String(UNAVAILABLE_RETRY_S) })
  }
  if (code === 'NOT_FOUND') return errorResponse('NOT_FOUND', 'Not found')
  if (code === 'PARSE') return errorResponse('INVALID_JSON', 'request body is not valid JSON')
  if (code === 'INVALID_COOKIE_SIGNATURE') return errorResponse('INVALID_PARAMETER', 'invalid cookie')
  log(error)
  return errorResponse('INTERNAL_ERROR', 'internal error')
}

/**
 * Body schemas say how their failures are answered: `x-error-shape: 'B'` (create/update feed) or
 * `x-field-codes` mapping a top-level field to its error code (create entry). Everything else is
 * 400 INVALID_PARAMETER. (Elysia runs a global error hook before any route-level one, so the schema carries it.)
 */
function validationResponse(error: ValidationError): Response {
  const { field, message } = describeValidation(error)
  const root = (error as unknown as { validator?: { schema?: Record<string, unknown> } }).validator?.schema ?? {}
  if (error.type === 'body' && root['x-error-shape'] === 'B') return shapeB(message, field)
  const codes = (error.type === 'body' ? root['x-field-codes'] : undefined) as Record<string, string> | undefined
  const code = codes?.[field.split('.')[0]] ?? 'INVALID_PARAMETER'
  return errorResponse(code, `invalid ${field || error.type}`, message)
}

const beforeAnswers = new WeakMap<Request, () => Promise<void>>()

/** Work to finish before an error answer to this request is sent (an upload's file removed): it is awaited, never thrown. */
export const beforeErrorAnswer = (request: Request, work: () => Promise<void>) => void beforeAnswers.set(request, work)

/**
 * `pageFor404`: what a path no route serves answers a person in a browser (a page; null: the JSON an API client gets).
 */
export const errorHandling = (log: (e: unknown) => void, pageFor404: (request: Request) => Response | null = () => null) =>
  new Elysia({ name: 'error-handling' })
    .onError({ as: 'global' }, ({ error, code, request }) => {
      if (code === 'NOT_FOUND') {
        const page = pageFor404(request)
        if (page) return page
      }
      const work = beforeAnswers.get(request)
      if (!work) return toErrorResponse(error, code, log)
      return work()
        .catch(log)
        .then(() => toErrorResponse(error, code, log))
    })
    // Elysia leaves a path parameter null when its percent-encoding is invalid: refuse it before any handler.
    .onTransform({ as: 'global' }, ({ params }) => {
      for (const value of Object.values((params ?? {}) as Record<string, unknown>)) {
        if (typeof value !== 'string') throw new DomainError('INVALID_PARAMETER', 'malformed URL', 'the path has invalid percent-encoding')
      }
    })
