// One JSON-RPC transport for every chain call, which notices when the node (not the payment) is the problem.
// Libraries that verify payments swallow RPC errors into a refusal ("simulation failed"); the transport records
// them in the running operation's context so the caller can tell "the payer is wrong" from "the RPC is down".
import { AsyncLocalStorage } from 'node:async_hooks'
import { tracer } from '../lib/traces.ts'
import {
  BaseError,
  HttpRequestError,
  InternalRpcError,
  LimitExceededRpcError,
  ResourceUnavailableRpcError,
  RpcRequestError,
  SocketClosedError,
  TimeoutError,
  http,
  type Transport,
} from 'viem'

interface Watch {
  failures: unknown[]
}

const watching = new AsyncLocalStorage<Watch>()

/** Runs `work`, returning its result and the first RPC failure seen while it ran (if any). */
export async function watchRpc<T>(work: () => Promise<T>): Promise<{ result: T; failure: unknown }> {
  const watch: Watch = { failures: [] }
  const result = await watching.run(watch, work)
  return { result, failure: watch.failures[0] }
}

// JSON-RPC error codes that describe the node, not the request: limits, overload, internal faults.
const NODE_CODES = new Set([-32005, -32002, -32603, 429])

/** True when an error says the RPC node or the facilitator could not answer, as opposed to a refusal. */
export function isBackendFailure(error: unknown): boolean {
  if (!(error instanceof BaseError))
    return error instanceof Error && /fetch failed|ECONNREFUSED|ENOTFOUND|Unable to connect|timed? ?out/i.test(error.message)
  return Boolean(
    error.walk(
      (e) =>
        e instanceof HttpRequestError ||
        e instanceof TimeoutError ||
        e instanceof SocketClosedError ||
        e instanceof LimitExceededRpcError ||
        e instanceof ResourceUnavailableRpcError ||
        e instanceof InternalRpcError ||
        (e instanceof RpcRequestError && NODE_CODES.has(e.code)),
    ),
  )
}

/** The first line of an error, without URLs' credentials, for logs and short reasons. */
export function describeFailure(error: unknown): string {
  const message = error instanceof BaseError ? error.shortMessage : String((error as Error)?.message ?? error)
  const line =
    message
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean) ?? 'unknown error'
  const redacted = line.replace(/(https?:\/\/[^/\s]+)\/[^\s]*/g, '$1/…')
  return redacted.length > 200 ? `${redacted.slice(0, 197)}...` : redacted
}

const CLIENT = { kind: 'client' } as const

/** viem's http transport whose failures are reported to the operation being watched. */
export function watchedHttp(url: string, timeoutMs: number): Transport {
  const base = http(url, { timeout: timeoutMs, retryCount: 1 })
  return ((params) => {
    const transport = base(params)
    return {
      ...transport,
      async request(args: Parameters<typeof transport.request>[0], options?: Parameters<typeof transport.request>[1]) {
        const call = async () => {
          try {
            return await transport.request(args, options)
          } catch (error) {
            if (isBackendFailure(error)) watching.getStore()?.failures.push(error)
            throw error
          }
        }
        // One span per chain call (retries included), named by its JSON-RPC method; never the URL, which holds keys.
        const t = tracer()
        return t === null ? call() : t.span(`chain ${args.method}`, { 'rpc.system': 'jsonrpc', 'rpc.method': args.method }, call, CLIENT)
      },
    }
  }) as Transport
}

/** The origin of a URL only: RPC and facilitator URLs often carry API keys in their path or query. */
export function redactUrl(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return 'invalid url'
  }
}
