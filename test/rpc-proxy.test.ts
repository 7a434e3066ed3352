// The fault-injecting JSON-RPC proxy (test/helpers/rpc-proxy.ts) against a real anvil chain: every fault as a viem
// client (the server's transport: http(), no retries) sees it, and what reached the chain behind it.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import {
  BaseError,
  HttpRequestError,
  RpcRequestError,
  createPublicClient,
  createWalletClient,
  http,
  keccak256,
  type Address,
  type Hash,
  type Hex,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { devKey, startChain, usdcAbi, type TestChain } from '../dev/chain.ts'
import { LOG_RANGE_ERROR_CODE, startRpcProxy, type RpcProxy } from './helpers/rpc-proxy.ts'

let chain: TestChain
let proxy: RpcProxy

beforeAll(async () => {
  chain = await startChain()
  proxy = await startRpcProxy(chain.rpcUrl)
})
afterEach(() => {
  proxy.heal()
  proxy.resetCalls()
})
afterAll(async () => {
  await proxy?.stop()
  await chain?.stop()
})

// cacheTime 0: viem otherwise answers a repeated getBlockNumber from its cache without asking the proxy.
const overProxy = () =>
  createPublicClient({ chain: chain.chain, transport: http(proxy.url, { retryCount: 0 }), cacheTime: 0, pollingInterval: 50 })
/** A wallet over the proxy. Dev accounts 2 and 3 are used by nobody else (chain.ts: relayer 0, funder 1). */
const walletOverProxy = (index: number) =>
  createWalletClient({ chain: chain.chain, transport: http(proxy.url, { retryCount: 0 }), account: privateKeyToAccount(devKey(index)) })
const directWallet = (index: number) =>
  createWalletClient({ chain: chain.chain, transport: http(chain.rpcUrl, { retryCount: 0 }), account: privateKeyToAccount(devKey(index)) })
const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address

/** The error `run` throws (fails the test when it does not throw). */
async function thrown(run: () => Promise<unknown>): Promise<BaseError> {
  try {
    await run()
  } catch (error) {
    expect(error).toBeInstanceOf(BaseError)
    return error as BaseError
  }
  throw new Error('expected an error')
}
const httpStatus = (error: BaseError) => (error.walk((e) => e instanceof HttpRequestError) as HttpRequestError | null)?.status
const rpcCode = (error: BaseError) => (error.walk((e) => e instanceof RpcRequestError) as RpcRequestError | null)?.code

const mint = (to: Address, amount: bigint) => ({ address: chain.usdc, abi: usdcAbi, functionName: 'mint', args: [to, amount] }) as const

describe('pass-through', () => {
  test('answers as anvil does and records each call in order', async () => {
    const client = overProxy()
    const before = Date.now()
    expect(await client.getChainId()).toBe(chain.chainId)
    expect(await client.getBlockNumber()).toBe(await chain.publicClient.getBlockNumber())
    expect(proxy.calls.map((call) => call.method)).toEqual(['eth_chainId', 'eth_blockNumber'])
    expect(proxy.calls[0]!.params).toEqual([])
    expect(proxy.calls[0]!.at).toBeGreaterThanOrEqual(before)
    expect(proxy.callsOf('eth_blockNumber')).toHaveLength(1)
    proxy.resetCalls()
    expect(proxy.calls).toHaveLength(0)
  })

  test('a batch array is answered as an array, rules applied per element', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 8, method: 'eth_blockNumber', params: [] },
    ]
    const post = () => fetch(proxy.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) })
    proxy.fail('eth_blockNumber', { times: 1, rpcError: { code: -32000, message: 'header not found' } })
    const answers = (await (await post()).json()) as { id: number; result?: Hex; error?: { code: number } }[]
    expect(answers[0]).toMatchObject({ id: 7, result: `0x${chain.chainId.toString(16)}` })
    expect(answers[1]).toMatchObject({ id: 8, error: { code: -32000, message: 'header not found' } })

    proxy.fail('eth_blockNumber', { times: 1, status: 429 })
    const limited = await post()
    expect(limited.status).toBe(429)
    expect(await limited.text()).toBe('upstream unavailable')
    expect(proxy.calls.map((call) => call.method)).toEqual(['eth_chainId', 'eth_blockNumber', 'eth_chainId', 'eth_blockNumber'])
  })
})

describe('fail', () => {
  test('times: 2 refuses two calls with HTTP 503 without forwarding them, then passes calls through', async () => {
    const client = overProxy()
    proxy.fail('eth_chainId', { times: 2 })
    expect(httpStatus(await thrown(() => client.getChainId()))).toBe(503)
    expect(httpStatus(await thrown(() => client.getChainId()))).toBe(503)
    expect(await client.getChainId()).toBe(chain.chainId)
    expect(proxy.callsOf('eth_chainId')).toHaveLength(3)
  })

  test('rpcError answers HTTP 200 with that JSON-RPC error; when picks the calls', async () => {
    const client = overProxy()
    const victim = freshAddress()
    proxy.fail('eth_getBalance', {
      rpcError: { code: -32000, message: 'header not found' },
      when: (params) => String(params[0]).toLowerCase() === victim.toLowerCase(),
    })
    const error = await thrown(() => client.getBalance({ address: victim }))
    expect(rpcCode(error)).toBe(-32000)
    expect(error.message).toContain('header not found')
    expect(await client.getBalance({ address: freshAddress() })).toBe(0n) // another address: forwarded
  })

  test("'*' matches every method", async () => {
    proxy.fail('*', { times: 1, status: 500 })
    expect(httpStatus(await thrown(() => overProxy().getBlockNumber()))).toBe(500)
    expect(await overProxy().getBlockNumber()).toBeGreaterThanOrEqual(0n)
  })
})

describe('failAfterForward', () => {
  test('eth_sendRawTransaction is broadcast and mined, yet the caller gets a 503', async () => {
    const to = freshAddress()
    proxy.failAfterForward('eth_sendRawTransaction', { times: 1 })
    const error = await thrown(() => walletOverProxy(2).writeContract(mint(to, 5_000_000n)))
    expect(httpStatus(error)).toBe(503)
    expect(proxy.callsOf('eth_sendRawTransaction')).toHaveLength(1)
    // anvil automines: the transaction the caller thinks failed lands in a block (at once, or a moment later under load).
    const raw = proxy.callsOf('eth_sendRawTransaction')[0]!.params[0] as Hex
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash: keccak256(raw), timeout: 10_000 })
    expect(receipt.status).toBe('success')
    expect(await chain.balanceOf(to)).toBe(5_000_000n)
  })
})

describe('before', () => {
  // anvil answers a sent transaction before its block is mined when it is busy: wait for the receipts.
  const mined = (hash: Hash) => chain.publicClient.waitForTransactionReceipt({ hash, timeout: 10_000, pollingInterval: 20 })

  test('the hook runs (once by default) before the call is forwarded: a front-running transaction lands first', async () => {
    const to = freshAddress()
    const order: string[] = []
    let frontRun: Hash | undefined
    proxy.before('eth_sendRawTransaction', async (params) => {
      order.push(`hook sees ${(params[0] as string).slice(0, 4)}`)
      // Straight to anvil, not through the proxy, and mined before the held transaction goes on: anvil's automine
      // can answer before it mines, and a busy anvil could otherwise put both in one block.
      frontRun = await directWallet(3).writeContract(mint(to, 1n))
      await mined(frontRun)
      order.push('front-run sent')
    })
    const wallet = walletOverProxy(2)
    const hash = await wallet.writeContract(mint(to, 2n))
    order.push('caller got hash')
    expect(order).toEqual(['hook sees 0x02', 'front-run sent', 'caller got hash']) // 0x02: an EIP-1559 transaction
    const first = await mined(frontRun!)
    const second = await mined(hash)
    expect(first.blockNumber).toBeLessThan(second.blockNumber)

    await mined(await wallet.writeContract(mint(to, 4n)))
    expect(order).toHaveLength(3) // used up: the second transaction went straight through
    expect(await chain.balanceOf(to)).toBe(7n)
  })
})

describe('delay', () => {
  test('holds matching calls before forwarding them', async () => {
    proxy.delay('eth_chainId', 150, { times: 1 })
    const started = performance.now()
    await overProxy().getChainId()
    expect(performance.now() - started).toBeGreaterThanOrEqual(140)
    const again = performance.now()
    await overProxy().getChainId()
    expect(performance.now() - again).toBeLessThan(140)
  })
})

describe('maxLogRange', () => {
  test('eth_getLogs over the cap fails with -32005 as on public RPCs; within it, by block hash, or uncapped it passes', async () => {
    await chain.testClient.mine({ blocks: 500 })
    const client = overProxy()
    const head = await chain.publicClient.getBlockNumber()
    proxy.maxLogRange(100)

    const over = await thrown(() => client.getLogs({ address: chain.usdc, fromBlock: head - 499n, toBlock: head }))
    expect(rpcCode(over)).toBe(LOG_RANGE_ERROR_CODE)
    expect(over.message).toContain('query exceeds max block range 100')
    // 'latest' is the head: the same 500 blocks.
    expect(rpcCode(await thrown(() => client.getLogs({ fromBlock: head - 499n, toBlock: 'latest' })))).toBe(LOG_RANGE_ERROR_CODE)

    expect(await client.getLogs({ address: chain.usdc, fromBlock: head - 49n, toBlock: head })).toEqual([])
    expect(await client.getLogs({ fromBlock: head - 49n, toBlock: 'latest' })).toEqual([])
    expect(await client.getLogs({ fromBlock: head - 99n })).toEqual([]) // no toBlock: 'latest', exactly 100 blocks
    expect(rpcCode(await thrown(() => client.getLogs({ fromBlock: head - 100n })))).toBe(LOG_RANGE_ERROR_CODE)
    expect(await client.getLogs()).toEqual([]) // neither: viem sends no fromBlock/toBlock, the head block alone
    const { hash } = await chain.publicClient.getBlock({ blockNumber: head })
    expect(await client.getLogs({ blockHash: hash! })).toEqual([])

    proxy.maxLogRange(null)
    expect(await client.getLogs({ fromBlock: head - 499n, toBlock: 'latest' })).toEqual([])
    // The proxy's head look-ups went straight to anvil.
    expect(proxy.callsOf('eth_blockNumber')).toHaveLength(0)
  })
})

describe('down, up, heal', () => {
  test('down refuses every call with 503 until up', async () => {
    const client = overProxy()
    proxy.down()
    expect(httpStatus(await thrown(() => client.getChainId()))).toBe(503)
    expect(httpStatus(await thrown(() => client.getBlockNumber()))).toBe(503)
    proxy.up()
    expect(await client.getChainId()).toBe(chain.chainId)
    expect(proxy.calls.map((call) => call.method)).toEqual(['eth_chainId', 'eth_blockNumber', 'eth_chainId'])
  })

  test('heal removes every rule, the log cap and down', async () => {
    const client = overProxy()
    let hooked = 0
    proxy.fail('eth_chainId')
    proxy.failAfterForward('eth_blockNumber')
    proxy.before('*', () => void hooked++, { times: 10 })
    proxy.delay('*', 5_000)
    proxy.maxLogRange(1)
    proxy.down()
    proxy.heal()
    expect(await client.getChainId()).toBe(chain.chainId)
    expect(await client.getBlockNumber()).toBeGreaterThan(0n)
    expect(await client.getLogs({ fromBlock: 0n, toBlock: 'latest' })).toBeArray()
    expect(hooked).toBe(0)
  })
})
