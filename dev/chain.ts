// A local Base-Sepolia look-alike chain for payment tests: anvil (from the npm package
// @foundry-rs/anvil-linux-amd64) on 127.0.0.1, chain id 84532, automine, with the test token of contracts/TestUSDC.sol
// placed at the Base Sepolia USDC address and contracts/Multicall3.sol at the canonical Multicall3 address.
//
//   const chain = await startChain()
//   const buyer = await chain.newFundedBuyer(1_000_000n)           // 1 USDC
//   const server = await startTestServer(chain.env)                  // TRELLIS_RPC_URL, _USDC_ADDRESS, _SETTLEMENT=local, _RELAYER_KEY
//   ...
//   await chain.stop()
//
// anvil is started through `setpriv --pdeathsig KILL` when available, so it dies with the test process even when
// that is SIGKILLed; an exit hook kills it too. Roles: `relayer` (dev account 0) is meant for the server under test
// (its key is in `env`); the harness mints from its own dev account 1, so its transactions never race the server's
// nonces.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, chmodSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Subprocess } from 'bun'
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  parseAbi,
  publicActions,
  toHex,
  type Address,
  type Chain,
  type Hash,
  type Hex,
  type LocalAccount,
  type PrivateKeyAccount,
} from 'viem'
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from 'viem/accounts'
import { createNonceManager, jsonRpc } from 'viem/nonce'
import { NETWORKS, networkSuffix, type NetworkName } from '../src/config/networks.ts'
import { forEachLine, waitForLine } from './lines.ts'

const ROOT = join(import.meta.dir, '..')

export const BASE_SEPOLIA_CHAIN_ID = 84532
export const BASE_SEPOLIA_USDC: Address = '0x036CbD53842c5426634e7929541eC2318f3dCF7e'
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11'
/** anvil's default dev mnemonic: accounts 0..9 hold 10 000 ETH each. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk'

export const devKey = (index: number): Hex => toHex(mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index }).getHdKey().privateKey!)

// Signatures longer than a line are in viem's JSON form; the ABI is the same as parseAbi makes of them.
const authorization = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
] as const
const vrs = [
  { name: 'v', type: 'uint8' },
  { name: 'r', type: 'bytes32' },
  { name: 's', type: 'bytes32' },
] as const

/** The functions of TestUSDC that tests call, typed for viem. The full ABI is in contracts/TestUSDC.json. */
export const usdcAbi = [
  ...parseAbi([
    'function name() view returns (string)',
    'function symbol() view returns (string)',
    'function decimals() view returns (uint8)',
    'function version() view returns (string)',
    'function totalSupply() view returns (uint256)',
    'function balanceOf(address) view returns (uint256)',
    'function DOMAIN_SEPARATOR() view returns (bytes32)',
  ]),
  {
    type: 'function',
    name: 'eip712Domain',
    stateMutability: 'view',
    inputs: [],
    outputs: [
      { name: 'fields', type: 'bytes1' },
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
      { name: 'salt', type: 'bytes32' },
      { name: 'extensions', type: 'uint256[]' },
    ],
  },
  ...parseAbi([
    'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
    'function mint(address to, uint256 value) returns (bool)',
    'function transfer(address to, uint256 value) returns (bool)',
  ]),
  { type: 'function', name: 'transferWithAuthorization', stateMutability: 'nonpayable', inputs: [...authorization, ...vrs], outputs: [] },
  {
    type: 'function',
    name: 'transferWithAuthorization',
    stateMutability: 'nonpayable',
    inputs: [...authorization, { name: 'signature', type: 'bytes' }],
    outputs: [],
  },
  { type: 'function', name: 'receiveWithAuthorization', stateMutability: 'nonpayable', inputs: [...authorization, ...vrs], outputs: [] },
  ...parseAbi([
    'function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
    'event Transfer(address indexed from, address indexed to, uint256 value)',
    'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  ]),
] as const

const multicallCall = {
  name: 'calls',
  type: 'tuple[]',
  components: [
    { name: 'target', type: 'address' },
    { name: 'callData', type: 'bytes' },
  ],
} as const
const multicallResult = {
  name: 'returnData',
  type: 'tuple[]',
  components: [
    { name: 'success', type: 'bool' },
    { name: 'returnData', type: 'bytes' },
  ],
} as const
/** Declared `view` (on chain they are payable) so that viem's readContract types them; selectors are the same. */
export const multicall3Abi = [
  {
    type: 'function',
    name: 'tryAggregate',
    stateMutability: 'view',
    inputs: [{ name: 'requireSuccess', type: 'bool' }, multicallCall],
    outputs: [multicallResult],
  },
  {
    type: 'function',
    name: 'aggregate3',
    stateMutability: 'view',
    inputs: [
      {
        name: 'calls',
        type: 'tuple[]',
        components: [
          { name: 'target', type: 'address' },
          { name: 'allowFailure', type: 'bool' },
          { name: 'callData', type: 'bytes' },
        ],
      },
    ],
    outputs: [multicallResult],
  },
] as const

/** EIP-712 types of an EIP-3009 transfer authorization (what x402 'exact' EVM payments sign). */
export const transferWithAuthorizationTypes = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const

/** An x402 'exact' EVM authorization as it travels in a payment header: every number a decimal string. */
export interface WireAuthorization {
  from: Address
  to: Address
  value: string
  validAfter: string
  validBefore: string
  nonce: Hex
}

export interface SignAuthorizationOptions {
  to: Address
  value: bigint
  /** Unix seconds; default now − 600 (as the x402 v1 client). */
  validAfter?: bigint
  /** Unix seconds; default now + 300. */
  validBefore?: bigint
  /** Default: 32 random bytes. */
  nonce?: Hex
  /** EIP-712 domain overrides (default name "USDC", version "2", chain 84532, the USDC address). */
  domain?: { name?: string; version?: string; chainId?: number; verifyingContract?: Address }
}

/** Signs an EIP-3009 TransferWithAuthorization with `account`, as an x402 client would. */
export async function signTransferAuthorization(
  account: LocalAccount,
  options: SignAuthorizationOptions,
): Promise<{ authorization: WireAuthorization; signature: Hex }> {
  const now = BigInt(Math.floor(Date.now() / 1000))
  const message = {
    from: account.address,
    to: getAddress(options.to),
    value: options.value,
    validAfter: options.validAfter ?? now - 600n,
    validBefore: options.validBefore ?? now + 300n,
    nonce: options.nonce ?? generatePrivateKey(), // 32 random bytes
  }
  const signature = await account.signTypedData({
    domain: {
      name: options.domain?.name ?? 'USDC',
      version: options.domain?.version ?? '2',
      chainId: options.domain?.chainId ?? BASE_SEPOLIA_CHAIN_ID,
      verifyingContract: options.domain?.verifyingContract ?? BASE_SEPOLIA_USDC,
    },
    types: transferWithAuthorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message,
  })
  return {
    authorization: {
      from: message.from,
      to: message.to,
      value: message.value.toString(),
      validAfter: message.validAfter.toString(),
      validBefore: message.validBefore.toString(),
      nonce: message.nonce,
    },
    signature,
  }
}

/** An x402 v1 payment (the JSON inside a base64 X-PAYMENT header) for `network` (default base-sepolia). */
export async function v1Payment(account: LocalAccount, options: SignAuthorizationOptions & { network?: string }) {
  const payload = await signTransferAuthorization(account, options)
  return { x402Version: 1 as const, scheme: 'exact' as const, network: options.network ?? 'base-sepolia', payload }
}

/** The value of an X-PAYMENT / PAYMENT-SIGNATURE header for a payment object. */
export const encodePaymentHeader = (payment: unknown): string => Buffer.from(JSON.stringify(payment)).toString('base64')

/** Locates anvil inside node_modules (or ANVIL_PATH) and makes sure it is executable. */
export function anvilBinary(): string {
  const override = process.env.ANVIL_PATH
  if (override) return override
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `the anvil npm package in devDependencies is for linux-x64 only (this is ${process.platform}-${process.arch}); set ANVIL_PATH`,
    )
  }
  const pkg = createRequire(join(ROOT, 'package.json')).resolve('@foundry-rs/anvil-linux-amd64/package.json')
  const bin = join(dirname(pkg), 'bin', 'anvil')
  if (!existsSync(bin)) throw new Error(`anvil binary missing at ${bin}: run npm ci`)
  // npm may install without running lifecycle scripts or keeping modes: make sure it can run.
  if ((statSync(bin).mode & 0o111) === 0) chmodSync(bin, 0o755)
  return bin
}

/** Runtime bytecode of a committed contract artifact (contracts/<name>.json, made by dev/compile-contracts.ts). */
export function runtimeBytecode(name: 'TestUSDC' | 'Multicall3'): Hex {
  const artifact = JSON.parse(readFileSync(join(ROOT, 'contracts', `${name}.json`), 'utf8')) as { deployedBytecode: Hex }
  return artifact.deployedBytecode
}

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p))

export interface StartChainOptions {
  /** The network this chain stands for: its chain id and USDC address come from the network table. Default base-sepolia. */
  network?: NetworkName
  /** Default: the network's (84532 for Base Sepolia, the chain id x402 derives from the name 'base-sepolia'). */
  chainId?: number
  /** Where the test token goes. Default: the network's USDC address. */
  usdcAddress?: Address
  /** Port on 127.0.0.1; default 0 (anvil picks a free one). */
  port?: number
  /** Seconds between blocks; default none (automine: every transaction is mined at once). */
  blockTime?: number
  /** viem polling interval in ms (receipts). Default 50. */
  pollingInterval?: number
  /** Print anvil's output lines to stderr as they come. */
  verbose?: boolean
}

export interface Buyer extends PrivateKeyAccount {
  privateKey: Hex
}

export async function startChain(options: StartChainOptions = {}) {
  const network = options.network ?? 'base-sepolia'
  const chainId = options.chainId ?? NETWORKS[network].chainId
  const usdc = getAddress(options.usdcAddress ?? NETWORKS[network].usdcAddress)
  const pollingInterval = options.pollingInterval ?? 50
  const bin = anvilBinary()
  const stateDir = mkdtempSync(join(tmpdir(), 'trellis-anvil-'))
  const statePath = join(stateDir, 'state.json')
  const logs: string[] = []

  let proc: Subprocess<'ignore', 'pipe', 'pipe'> | null = null
  let port = options.port ?? 0
  const killNow = () => {
    try {
      proc?.kill('SIGKILL')
    } catch {}
  }
  const onExit = () => {
    killNow()
    try {
      rmSync(stateDir, { recursive: true, force: true })
    } catch {}
  }
  process.on('exit', onExit)

  const spawnAnvil = async (): Promise<void> => {
    const args = [
      bin,
      '--host',
      '127.0.0.1',
      '--port',
      String(port), // 0 the first time: anvil picks a free port and prints it
      '--chain-id',
      String(chainId),
      // --state loads the file if it exists and dumps to it on a graceful exit: restart() keeps the chain.
      '--state',
      statePath,
      ...(options.blockTime ? ['--block-time', String(options.blockTime)] : []),
    ]
    const cmd = SETPRIV ? [SETPRIV, '--pdeathsig', 'KILL', '--', ...args] : args
    const child = Bun.spawn(cmd, { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
    proc = child
    const remember = (prefix: string) => (line: string) => {
      logs.push(`${prefix}${line}`)
      if (logs.length > 2000) logs.splice(0, 1000)
      if (options.verbose) console.error(`[anvil] ${line}`)
    }
    // Drain stderr so anvil never blocks on a full pipe; keep it for error messages.
    forEachLine(child.stderr, remember('stderr: '))
    const listening = waitForLine(child.stdout, (line) => /^Listening on 127\.0\.0\.1:(\d+)/.exec(line)?.[1], {
      timeoutMs: 15_000,
      onLine: remember(''),
      what: 'anvil',
    })
      .then(Number)
      .catch(async (error) => {
        throw new Error(`${error.message} (exit ${child.exitCode}):\n${logs.slice(-40).join('\n')}`)
      })
    try {
      port = await listening
    } catch (error) {
      killNow()
      throw error
    }
  }

  const started = performance.now()
  try {
    await spawnAnvil()
  } catch (error) {
    process.off('exit', onExit)
    onExit()
    throw error
  }
  const rpcUrl = `http://127.0.0.1:${port}`

  const chain: Chain = defineChain({
    id: chainId,
    name: `anvil (chain ${chainId})`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
  })
  const transport = http(rpcUrl, { retryCount: 0 })
  const publicClient = createPublicClient({ chain, transport, pollingInterval })
  const testClient = createTestClient({ chain, transport, mode: 'anvil', pollingInterval })

  const relayerKey = devKey(0)
  const relayerAccount = privateKeyToAccount(relayerKey, { nonceManager: createNonceManager({ source: jsonRpc() }) })
  /** The relayer as a viem wallet client with public actions: what a facilitator signer needs. */
  const relayerClient = createWalletClient({ chain, transport, account: relayerAccount, pollingInterval }).extend(publicActions)
  const funderAccount = privateKeyToAccount(devKey(1))
  const funderClient = createWalletClient({ chain, transport, account: funderAccount, pollingInterval })

  const install = async () => {
    await testClient.setCode({ address: usdc, bytecode: runtimeBytecode('TestUSDC') })
    await testClient.setCode({ address: MULTICALL3_ADDRESS, bytecode: runtimeBytecode('Multicall3') })
  }
  await install()
  const startMs = Math.round(performance.now() - started)

  // Mints go one at a time from the funder account: each waits for its receipt before the next is sent.
  let queue: Promise<unknown> = Promise.resolve()
  const fundBuyer = (to: Address, amount: bigint): Promise<Hash> => {
    const run = queue.then(async () => {
      const hash = await funderClient.writeContract({ address: usdc, abi: usdcAbi, functionName: 'mint', args: [getAddress(to), amount] })
      const receipt = await publicClient.waitForTransactionReceipt({ hash })
      if (receipt.status !== 'success') throw new Error(`mint reverted: ${hash}`)
      return hash
    })
    queue = run.catch(() => {})
    return run
  }

  let stopped = false
  const stopProcess = async (signal: 'SIGTERM' | 'SIGKILL') => {
    const child = proc
    if (!child || child.exitCode !== null || child.signalCode) return
    child.kill(signal)
    const timeout = setTimeout(() => child.kill('SIGKILL'), 5_000)
    await child.exited
    clearTimeout(timeout)
  }

  /** The EIP-712 domain of this chain's token, as its USDC signs. */
  const domain = { chainId, verifyingContract: usdc }
  return {
    rpcUrl,
    /** The network's name, as TRELLIS_NETWORKS and x402 v1 write it. */
    network,
    chainId,
    chain,
    usdc,
    multicall3: MULTICALL3_ADDRESS,
    /** Milliseconds from spawn to contracts in place. */
    startMs,
    publicClient,
    testClient,
    /** Wallet client (with public actions) for the relayer account; it has its own nonce manager. */
    walletClient: relayerClient,
    relayer: { address: relayerAccount.address, privateKey: relayerKey, account: relayerAccount },
    /** Environment for a Trellis server settling on this chain itself. */
    env: {
      TRELLIS_NETWORK: network,
      TRELLIS_RPC_URL: rpcUrl,
      TRELLIS_USDC_ADDRESS: usdc,
      TRELLIS_USDC_NAME: 'USDC',
      TRELLIS_USDC_VERSION: '2',
      TRELLIS_SETTLEMENT: 'local',
      TRELLIS_RELAYER_KEY: relayerKey,
    } as Record<string, string>,
    /** anvil's recent output lines (for failure messages). */
    logs,

    /** Mints `amount` (atomic units, 6 decimals) of test USDC to `to`. */
    fundBuyer,
    /** A transfer authorization signed for this chain's token. */
    sign: (account: LocalAccount, options: SignAuthorizationOptions) =>
      signTransferAuthorization(account, { ...options, domain: { ...domain, ...options.domain } }),
    /** An x402 v1 payment on this chain's network. */
    payment: (account: LocalAccount, options: SignAuthorizationOptions) =>
      v1Payment(account, { ...options, network, domain: { ...domain, ...options.domain } }),
    /** A fresh private-key account holding `amount` test USDC (and no ETH: x402 buyers pay no gas). */
    async newFundedBuyer(amount: bigint): Promise<Buyer> {
      const privateKey = generatePrivateKey()
      const account = privateKeyToAccount(privateKey) as Buyer
      account.privateKey = privateKey
      if (amount > 0n) await fundBuyer(account.address, amount)
      return account
    },
    async balanceOf(address: Address): Promise<bigint> {
      return publicClient.readContract({ address: usdc, abi: usdcAbi, functionName: 'balanceOf', args: [getAddress(address)] })
    },
    async authorizationState(from: Address, nonce: Hex): Promise<boolean> {
      return publicClient.readContract({ address: usdc, abi: usdcAbi, functionName: 'authorizationState', args: [getAddress(from), nonce] })
    },
    /** Chain time (latest block timestamp, seconds). */
    async now(): Promise<bigint> {
      return (await publicClient.getBlock()).timestamp
    },
    /** Graceful stop that keeps the chain state, then the same chain again on the same port (an RPC outage). */
    async restart(): Promise<void> {
      if (stopped) throw new Error('chain was stopped')
      await stopProcess('SIGTERM')
      await spawnAnvil()
      await install() // idempotent; the dumped state already holds the code
    },
    /** Stops anvil like a crash: SIGKILL (the chain is unreachable until restart(), which then starts from the last graceful dump). */
    async kill(): Promise<void> {
      await stopProcess('SIGKILL')
    },
    /** Stops anvil for good and removes its state. */
    async stop(): Promise<void> {
      stopped = true
      await stopProcess('SIGTERM')
      process.off('exit', onExit)
      rmSync(stateDir, { recursive: true, force: true })
    },
  }
}

export type TestChain = Awaited<ReturnType<typeof startChain>>

/**
 * One network's settings (`chain.env`, maybe with its RPC or settlement changed) as a later network's: each variable
 * with the network's name appended (TRELLIS_RPC_URL_POLYGON_AMOY, …); TRELLIS_NETWORK is the first network's only.
 */
export function asLaterNetwork(network: string, settings: Record<string, string>): Record<string, string> {
  const suffix = networkSuffix(network)
  return Object.fromEntries(
    Object.entries(settings)
      .filter(([name]) => name !== 'TRELLIS_NETWORK')
      .map(([name, value]) => [`${name}_${suffix}`, value]),
  )
}

/** The environment of a server selling on every chain given, the first one first, each settling locally. */
export const sellingOn = (first: TestChain, ...later: TestChain[]): Record<string, string> => ({
  ...first.env,
  TRELLIS_NETWORKS: [first, ...later].map((chain) => chain.network).join(','),
  ...Object.assign({}, ...later.map((chain) => asLaterNetwork(chain.network, chain.env))),
})
