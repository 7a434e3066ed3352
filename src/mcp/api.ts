// The MCP tools' only way to Trellis: requests to its public HTTP API, sent through the function they are given —
// the network for `trellis mcp`, the app's own handler for /mcp on the server. So both speak exactly the API any
// client gets (its validation, its errors, its x402 answers), and the tools never reach the records.

/** What carries a request to a Trellis API and brings its answer back. */
export type Fetcher = (request: Request) => Promise<Response>

/** An answer of the API that is not what the tool needed: its status, and the code and message of its error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
  ) {
    super(message)
  }
}

export type Query = Record<string, string | number | boolean | readonly string[] | undefined>

export interface TrellisApi {
  /** The API's base URL as this client reaches it, without a trailing slash. */
  readonly base: string
  /** A request to `path` (starting with /), answered as it comes. */
  send(path: string, init?: RequestInit): Promise<Response>
  /** A request whose answer must be `expect` (default 200) with a JSON body; any other answer is an ApiError. */
  json<T = any>(path: string, init?: RequestInit & { expect?: number }): Promise<T>
  /**
   * The API path of a URL the API handed out (content_url: built from the server's public URL, which may not be how
   * this client reaches it), to send under `base`: nothing is ever fetched from another host, whatever an answer names.
   */
  pathOf(url: string): string
}

/** `path?query`: unset values left out, lists repeated (tags=a&tags=b, as the API reads them). */
export function withQuery(path: string, query: Query): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one))
  }
  const text = params.toString()
  return text ? `${path}?${text}` : path
}

/** One path segment, whatever the caller typed (the tools' schemas also hold ids to UUIDs). */
export const segment = (value: string) => encodeURIComponent(value)

/** The ApiError for an answer: the API's own code and message (shape A `{error, code, details}` or B `{error, message}`). */
export async function apiError(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '')
  let body: any = null
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: the status says it
  }
  const code = typeof body?.code === 'string' ? body.code : typeof body?.error === 'string' ? body.error : null
  const message = [
    body?.message ?? body?.error,
    typeof body?.details === 'string' ? body.details : body?.details?.field ? `field ${body.details.field}` : null,
  ]
    .filter((part) => typeof part === 'string' && part !== '' && part !== code)
    .join(': ')
  return new ApiError(response.status, code, `Trellis answered ${response.status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`)
}

export function trellisApi(baseUrl: string, fetcher: Fetcher): TrellisApi {
  const base = baseUrl.replace(/\/+$/, '')
  const send = (path: string, init?: RequestInit) => fetcher(new Request(`${base}${path}`, init))
  return {
    base,
    send,
    async json(path, init = {}) {
      const { expect = 200, ...rest } = init
      const response = await send(path, rest)
      if (response.status !== expect) throw await apiError(response)
      return response.json()
    },
    pathOf(url) {
      const at = new URL(url)
      const i = at.pathname.indexOf('/v1/')
      if (i < 0) throw new Error(`the server handed out a URL outside its API: ${url}`)
      return `${at.pathname.slice(i)}${at.search}`
    },
  }
}
