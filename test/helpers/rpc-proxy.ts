// A fault-injecting JSON-RPC pass-through proxy for payment tests. It sits between the server under test and anvil,
// forwards every call unchanged, and lets a test make the RPC misbehave at exact moments:
//
//   const chain = await startChain()
//   const rpc = await startRpcProxy(chain.rpcUrl)
//   const server = await startTestServer({ ...chain.env, TRELLIS_RPC_URL: rpc.url })
//   rpc.failAfterForward('eth_sendRawTransaction', { times: 1 })  // the transaction is broadcast, the caller sees a 503
//   rpc.before('eth_sendRawTransaction', () => frontRun())         // a competing transaction lands first
//   rpc.maxLogRange(100)                                           // eth_getLogs capped like a public RPC
//   ...
//   await rpc.stop()
//
// Each call goes through the rules in this order: down, fail, maxLogRange, before, delay, forward, failAfterForward.
// Of each kind, the first rule (in the order they were added) whose method and `when` match applies and uses up one
// of its `times`; used-up rules are dropped. The proxy's own look-ups (the head block for maxLogRange) go straight
// upstream: they are neither recorded in `calls` nor subject to rules.

export interface RpcCall {
  method: string
  params: unknown[]
  /** Date.now() when the proxy received the call. */
  at: number
}

export interface RpcErrorObject {
  code: number
  message: string
}

export interface RuleOptions {
  /** How many matching calls the rule applies to. */
  times?: number
  /** Only calls whose params pass this match (e.g. one transaction, one address). */
  when?: (params: unknown[]) => boolean
}

export interface FailOptions extends RuleOptions {
  /** HTTP status of the failure; default 503. Ignored when `rpcError` is given. */
  status?: number
  /** Answer HTTP 200 with this JSON-RPC error instead of an HTTP failure. */
  rpcError?: RpcErrorObject
}

/** A method name, or '*' for every method. */
export type MethodMatch = string

interface JsonRpcRequest {
  jsonrpc?: string
  id?: number | string | null
  method?: unknown
  params?: unknown
}

/** What the caller gets for one call: an HTTP failure, or a JSON-RPC response object (absent for notifications). */
type Outcome = { kind: 'http'; status: number; body: string } | { kind: 'json'; value: unknown }

interface Rule {
  method: MethodMatch
  remaining: number
  when?: (params: unknown[]) => boolean
}
interface FailRule extends Rule {
  status: number
  rpcError?: RpcErrorObject
}
interface BeforeRule extends Rule {
  hook: (params: unknown[]) => Promise<void> | void
}
interface DelayRule extends Rule {
  ms: number
}
interface FailAfterRule extends Rule {
  status: number
}

const UNAVAILABLE = 'upstream unavailable'
/** What public RPCs (Alchemy, Infura, QuickNode, ...) answer for an eth_getLogs range over their cap. */
export const LOG_RANGE_ERROR_CODE = -32005

const httpFailure = (status: number, body = UNAVAILABLE): Outcome => ({ kind: 'http', status, body })
const rpcErrorOutcome = (request: JsonRpcRequest, error: RpcErrorObject): Outcome => ({
  kind: 'json',
  value: { jsonrpc: '2.0', id: request.id ?? null, error },
})

/** Finds the first live rule for this call and uses up one of its times. */
function take<R extends Rule>(rules: R[], method: string, params: unknown[]): R | undefined {
  const index = rules.findIndex((rule) => (rule.method === '*' || rule.method === method) && (rule.when?.(params) ?? true))
  if (index < 0) return undefined
  const rule = rules[index]!
  rule.remaining -= 1
  if (rule.remaining <= 0) rules.splice(index, 1)
  return rule
}

function rule(method: MethodMatch, options: RuleOptions | undefined, defaultTimes: number): Rule {
  const times = options?.times ?? defaultTimes
  if (!(times > 0)) throw new Error(`rpc-proxy: times must be positive (got ${times})`)
  return { method, remaining: times, when: options?.when }
}

const paramsOf = (request: JsonRpcRequest): unknown[] => (Array.isArray(request.params) ? request.params : [])
const methodOf = (request: JsonRpcRequest): string => (typeof request.method === 'string' ? request.method : '')

export async function startRpcProxy(upstreamUrl: string) {
  const calls: RpcCall[] = []
  let failRules: FailRule[] = []
  let beforeRules: BeforeRule[] = []
  let delayRules: DelayRule[] = []
  let failAfterRules: FailAfterRule[] = []
  let logRangeLimit: number | null = null
  let isDown = false

  /** Sends a JSON-RPC body upstream; an unreachable upstream is a 502, as from a real gateway. */
  const post = async (body: string): Promise<Outcome> => {
    let response: Response
    try {
      response = await fetch(upstreamUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    } catch (error) {
      return httpFailure(502, `upstream unreachable: ${(error as Error).message}`)
    }
    const text = await response.text()
    if (!response.ok) return httpFailure(response.status, text)
    // Notifications (no id) get an empty answer.
    return { kind: 'json', value: text ? JSON.parse(text) : undefined }
  }

  const headBlock = async (): Promise<bigint> => {
    const answer = await post(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'eth_blockNumber', params: [] }))
    const result = answer.kind === 'json' ? (answer.value as { result?: unknown }).result : undefined
    if (typeof result !== 'string') throw new Error(`rpc-proxy: eth_blockNumber upstream failed: ${JSON.stringify(answer)}`)
    return BigInt(result)
  }

  /** A block tag or number as a number; named tags other than 'earliest' are the head, which is what they are on anvil. */
  const blockNumber = async (tag: unknown): Promise<bigint> => {
    if (typeof tag === 'string' && /^0x[0-9a-f]+$/i.test(tag)) return BigInt(tag)
    if (tag === 'earliest') return 0n
    return headBlock()
  }

  /** The over-range error for an eth_getLogs call, or undefined when the call may go through. */
  const logRangeError = async (params: unknown[]): Promise<RpcErrorObject | undefined> => {
    if (logRangeLimit === null) return undefined
    const filter = (params[0] ?? {}) as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown }
    if (filter.blockHash !== undefined) return undefined // one block: never over any cap
    // A missing fromBlock or toBlock means 'latest' (execution-apis eth_getLogs).
    const from = await blockNumber(filter.fromBlock ?? 'latest')
    const to = await blockNumber(filter.toBlock ?? 'latest')
    if (to - from + 1n <= BigInt(logRangeLimit)) return undefined
    return { code: LOG_RANGE_ERROR_CODE, message: `query exceeds max block range ${logRangeLimit}` }
  }

  /** One call through the rules. `body` is its JSON text as received, forwarded byte for byte. */
  const handle = async (request: JsonRpcRequest, body: string): Promise<Outcome> => {
    const method = methodOf(request)
    const params = paramsOf(request)
    calls.push({ method, params, at: Date.now() })

    if (isDown) return httpFailure(503)
    const fail = take(failRules, method, params)
    if (fail) return fail.rpcError ? rpcErrorOutcome(request, fail.rpcError) : httpFailure(fail.status)
    if (method === 'eth_getLogs') {
      const error = await logRangeError(params)
      if (error) return rpcErrorOutcome(request, error)
    }
    await take(beforeRules, method, params)?.hook(params)
    const delay = take(delayRules, method, params)
    if (delay) await Bun.sleep(delay.ms)
    const answer = await post(body)
    // Taken only now, so a call that never got forwarded (upstream down) does not use it up.
    const failAfter = answer.kind === 'json' ? take(failAfterRules, method, params) : undefined
    return failAfter ? httpFailure(failAfter.status) : answer
  }

  const respond = (outcome: Outcome): Response =>
    outcome.kind === 'http'
      ? new Response(outcome.body, { status: outcome.status, headers: { 'content-type': 'text/plain' } })
      : outcome.value === undefined
        ? new Response(null, { status: 200 })
        : Response.json(outcome.value)

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    // Hooks and delays may hold a request for long: never let Bun cut it (its default idle timeout is 10 s).
    idleTimeout: 0,
    async fetch(req) {
      const text = await req.text()
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } })
      }
      try {
        if (!Array.isArray(parsed)) return respond(await handle(parsed as JsonRpcRequest, text))
        // A batch: elements in order, each forwarded alone. The first HTTP failure fails the whole batch like a
        // gateway would; elements before it have been forwarded, the ones after it are not.
        const answers: unknown[] = []
        for (const element of parsed as JsonRpcRequest[]) {
          const outcome = await handle(element, JSON.stringify(element))
          if (outcome.kind === 'http') return respond(outcome)
          if (outcome.value !== undefined) answers.push(outcome.value)
        }
        return Response.json(answers)
      } catch (error) {
        // A throwing hook (or a broken upstream answer) is a bug in the test: make it loud on both sides.
        console.error('rpc-proxy:', error)
        return new Response(`rpc-proxy: ${(error as Error).message}`, { status: 500 })
      }
    },
  })

  return {
    url: `http://127.0.0.1:${server.port}`,
    /** Every JSON-RPC call received, in order (batch elements one by one), including refused ones. */
    calls,
    callsOf: (method: string): RpcCall[] => calls.filter((call) => call.method === method),
    resetCalls(): void {
      calls.length = 0
    },

    /** The next `times` (default all) matching calls are not forwarded: HTTP `status` (503), or `rpcError` over HTTP 200. */
    fail(method: MethodMatch, options: FailOptions = {}): void {
      failRules.push({ ...rule(method, options, Infinity), status: options.status ?? 503, rpcError: options.rpcError })
    },
    /** Matching calls are forwarded (a transaction is broadcast) but the caller gets HTTP `status` (503). Default: all. */
    failAfterForward(method: MethodMatch, options: RuleOptions & { status?: number } = {}): void {
      failAfterRules.push({ ...rule(method, options, Infinity), status: options.status ?? 503 })
    },
    /** Runs `hook` before forwarding each of the next `times` (default 1) matching calls, which wait for it. */
    before(method: MethodMatch, hook: (params: unknown[]) => Promise<void> | void, options: RuleOptions = {}): void {
      beforeRules.push({ ...rule(method, options, 1), hook })
    },
    /** Holds matching calls `ms` before forwarding them. Default: all. */
    delay(method: MethodMatch, ms: number, options: RuleOptions = {}): void {
      delayRules.push({ ...rule(method, options, Infinity), ms })
    },
    /** Answers eth_getLogs spanning more than `blocks` blocks with a -32005 error, as public RPCs do; null: no cap. */
    maxLogRange(blocks: number | null): void {
      logRangeLimit = blocks
    },
    /** Every call is refused with HTTP 503 until up(). */
    down(): void {
      isDown = true
    },
    up(): void {
      isDown = false
    },
    /** Removes every rule, the log range cap and down(). Keeps `calls`. */
    heal(): void {
      failRules = []
      beforeRules = []
      delayRules = []
      failAfterRules = []
      logRangeLimit = null
      isDown = false
    },
    async stop(): Promise<void> {
      await server.stop(true)
    },
  }
}

export type RpcProxy = Awaited<ReturnType<typeof startRpcProxy>>
