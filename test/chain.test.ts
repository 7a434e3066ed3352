// The local-chain harness (dev/chain.ts): anvil + TestUSDC at the Base Sepolia USDC address + Multicall3,
// EIP-3009 on-chain behaviour, and the @x402 facilitator (v1 and v2 'exact' payloads) verifying and settling on it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { x402Facilitator } from '@x402/core/facilitator'
import { toFacilitatorEvmSigner } from '@x402/evm'
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator'
import {
  BaseError,
  ContractFunctionRevertedError,
  domainSeparator,
  encodeFunctionData,
  parseEventLogs,
  parseSignature,
  type Hex,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { CONTRACT_NAMES, artifactPath, compileContracts } from '../dev/compile-contracts.ts'
import {
  BASE_SEPOLIA_USDC,
  MULTICALL3_ADDRESS,
  multicall3Abi,
  signTransferAuthorization,
  startChain,
  usdcAbi,
  v1Payment,
  type TestChain,
} from '../dev/chain.ts'

let chain: TestChain
beforeAll(async () => {
  chain = await startChain()
})
afterAll(() => chain?.stop())

/** The revert reason of a failed write/simulation, or throws if it did not fail. */
async function revertReason(run: () => Promise<unknown>): Promise<string> {
  try {
    await run()
  } catch (error) {
    if (error instanceof BaseError) {
      const revert = error.walk((e) => e instanceof ContractFunctionRevertedError)
      if (revert instanceof ContractFunctionRevertedError) return revert.reason ?? revert.shortMessage
      return error.shortMessage
    }
    throw error
  }
  throw new Error('expected a revert')
}

const USDC = 1_000_000n

/**
 * An @x402 facilitator settling with the chain's relayer. A viem wallet client extended with public actions has every
 * method FacilitatorEvmSigner needs; the cast is only because viem 2.57 types verifyTypedData more strictly.
 * registerExactEvmScheme registers ExactEvmScheme (v2) for `networks` and ExactEvmSchemeV1 for every v1 EVM network
 * name ('base-sepolia', 'base', ...), whatever `networks` says.
 */
const makeFacilitator = () => {
  const signer = toFacilitatorEvmSigner({ ...chain.walletClient, address: chain.relayer.address } as any)
  return registerExactEvmScheme(new x402Facilitator(), { signer, networks: 'eip155:84532' })
}

describe('contract artifacts', () => {
  test('the committed artifacts are what solc (npm, bundled compiler) makes of the sources now', () => {
    const fresh = compileContracts()
    for (const name of CONTRACT_NAMES) {
      const committed = JSON.parse(readFileSync(artifactPath(name), 'utf8'))
      expect(committed).toEqual(JSON.parse(JSON.stringify(fresh[name])))
    }
  })
})

describe('anvil chain', () => {
  test('runs with chain id 84532 and a funded relayer', async () => {
    expect(chain.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(await chain.publicClient.getChainId()).toBe(84532)
    expect(await chain.publicClient.getBalance({ address: chain.relayer.address })).toBeGreaterThan(10n ** 21n)
    expect(chain.env.TRELLIS_RELAYER_KEY).toBe(chain.relayer.privateKey)
    expect(privateKeyToAccount(chain.relayer.privateKey).address).toBe(chain.relayer.address)
    console.log(`anvil started and contracts placed in ${chain.startMs} ms`)
  })

  test('token metadata: USDC, 6 decimals, EIP-712 domain {USDC, 2, 84532, address}', async () => {
    const read = <F extends 'name' | 'symbol' | 'decimals' | 'version' | 'DOMAIN_SEPARATOR'>(functionName: F) =>
      chain.publicClient.readContract({ address: chain.usdc, abi: usdcAbi, functionName })
    expect(chain.usdc).toBe(BASE_SEPOLIA_USDC)
    expect(await read('name')).toBe('USDC')
    expect(await read('symbol')).toBe('USDC')
    expect(await read('decimals')).toBe(6)
    expect(await read('version')).toBe('2')
    const [fields, name, version, chainId, verifyingContract, salt, extensions] = await chain.publicClient.readContract({
      address: chain.usdc,
      abi: usdcAbi,
      functionName: 'eip712Domain',
    })
    expect({ fields, name, version, chainId, verifyingContract, salt, extensions }).toEqual({
      fields: '0x0f',
      name: 'USDC',
      version: '2',
      chainId: 84532n,
      verifyingContract: BASE_SEPOLIA_USDC,
      salt: `0x${'0'.repeat(64)}`,
      extensions: [],
    })
    expect(await read('DOMAIN_SEPARATOR')).toBe(
      domainSeparator({ domain: { name: 'USDC', version: '2', chainId: 84532, verifyingContract: BASE_SEPOLIA_USDC } }),
    )
  })

  test('mint and balance', async () => {
    const buyer = await chain.newFundedBuyer(5n * USDC)
    expect(await chain.balanceOf(buyer.address)).toBe(5n * USDC)
    await chain.fundBuyer(buyer.address, 250_000n)
    expect(await chain.balanceOf(buyer.address)).toBe(5_250_000n)
    // Concurrent mints are queued, none lost.
    const other = privateKeyToAccount(generatePrivateKey())
    await Promise.all([1n, 2n, 3n, 4n].map((n) => chain.fundBuyer(other.address, n)))
    expect(await chain.balanceOf(other.address)).toBe(10n)
  })

  test('Multicall3 tryAggregate and aggregate3 report each call, failures included', async () => {
    const buyer = await chain.newFundedBuyer(7n)
    const calls = [
      { target: chain.usdc, callData: encodeFunctionData({ abi: usdcAbi, functionName: 'balanceOf', args: [buyer.address] }) },
      // A transfer from the multicall contract itself, which holds nothing: fails.
      { target: chain.usdc, callData: encodeFunctionData({ abi: usdcAbi, functionName: 'transfer', args: [buyer.address, 1n] }) },
    ]
    const results = await chain.publicClient.readContract({
      address: MULTICALL3_ADDRESS,
      abi: multicall3Abi,
      functionName: 'tryAggregate',
      args: [false, calls],
    })
    expect(results.map((r) => r.success)).toEqual([true, false])
    expect(BigInt(results[0]!.returnData)).toBe(7n)
    expect(
      await revertReason(() =>
        chain.publicClient.readContract({
          address: MULTICALL3_ADDRESS,
          abi: multicall3Abi,
          functionName: 'tryAggregate',
          args: [true, calls],
        }),
      ),
    ).toContain('Multicall3: call failed')
    // viem's own multicall action uses aggregate3 at the chain's multicall3 address.
    const [balance, failed] = await chain.publicClient.multicall({
      contracts: [
        { address: chain.usdc, abi: usdcAbi, functionName: 'balanceOf', args: [buyer.address] },
        { address: chain.usdc, abi: usdcAbi, functionName: 'transfer', args: [buyer.address, 1n] },
      ],
    })
    expect(balance).toEqual({ status: 'success', result: 7n })
    expect(failed!.status).toBe('failure')
  })
})

describe('EIP-3009 transferWithAuthorization', () => {
  const submitVrs = (auth: Awaited<ReturnType<typeof signTransferAuthorization>>) => {
    const { v, r, s } = parseSignature(auth.signature)
    const a = auth.authorization
    return chain.walletClient.writeContract({
      address: chain.usdc,
      abi: usdcAbi,
      functionName: 'transferWithAuthorization',
      args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, Number(v), r, s],
    })
  }
  const submitBytes = (auth: Awaited<ReturnType<typeof signTransferAuthorization>>) => {
    const a = auth.authorization
    return chain.walletClient.writeContract({
      address: chain.usdc,
      abi: usdcAbi,
      functionName: 'transferWithAuthorization',
      args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, auth.signature],
    })
  }

  test('a signed authorization, submitted by the relayer, moves the funds once and marks the nonce used', async () => {
    const buyer = await chain.newFundedBuyer(3n * USDC)
    const seller = privateKeyToAccount(generatePrivateKey()).address
    const auth = await signTransferAuthorization(buyer, { to: seller, value: 1_250_000n })
    expect(await chain.authorizationState(buyer.address, auth.authorization.nonce)).toBe(false)

    const hash = await submitVrs(auth)
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash })
    expect(receipt.status).toBe('success')
    expect(await chain.balanceOf(buyer.address)).toBe(1_750_000n)
    expect(await chain.balanceOf(seller)).toBe(1_250_000n)
    expect(await chain.authorizationState(buyer.address, auth.authorization.nonce)).toBe(true)
    const events = parseEventLogs({ abi: usdcAbi, logs: receipt.logs }).map((e) => [e.eventName, e.args])
    expect(events).toEqual([
      ['AuthorizationUsed', { authorizer: buyer.address, nonce: auth.authorization.nonce }],
      ['Transfer', { from: buyer.address, to: seller, value: 1_250_000n }],
    ])

    // Replays through either overload revert.
    expect(await revertReason(() => submitVrs(auth))).toBe('FiatTokenV2: authorization is used or canceled')
    expect(await revertReason(() => submitBytes(auth))).toBe('FiatTokenV2: authorization is used or canceled')
    expect(await chain.balanceOf(seller)).toBe(1_250_000n)
  })

  test('the bytes-signature overload works too', async () => {
    const buyer = await chain.newFundedBuyer(USDC)
    const seller = privateKeyToAccount(generatePrivateKey()).address
    const auth = await signTransferAuthorization(buyer, { to: seller, value: USDC })
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash: await submitBytes(auth) })
    expect(receipt.status).toBe('success')
    expect(await chain.balanceOf(seller)).toBe(USDC)
  })

  test('expired, not yet valid, wrong signer, wrong domain, tampered, high-s and overdrawn authorizations revert', async () => {
    const buyer = await chain.newFundedBuyer(USDC)
    const seller = privateKeyToAccount(generatePrivateKey()).address
    const now = await chain.now()

    const expired = await signTransferAuthorization(buyer, { to: seller, value: 1n, validAfter: 0n, validBefore: now - 1n })
    expect(await revertReason(() => submitVrs(expired))).toBe('FiatTokenV2: authorization is expired')

    const early = await signTransferAuthorization(buyer, { to: seller, value: 1n, validAfter: now + 3600n })
    expect(await revertReason(() => submitVrs(early))).toBe('FiatTokenV2: authorization is not yet valid')

    // Signed by someone else but claiming to be from the buyer.
    const mallory = privateKeyToAccount(generatePrivateKey())
    const forged = await signTransferAuthorization(mallory, { to: seller, value: 1n })
    forged.authorization.from = buyer.address
    expect(await revertReason(() => submitVrs(forged))).toBe('FiatTokenV2: invalid signature')
    expect(await revertReason(() => submitBytes(forged))).toBe('FiatTokenV2: invalid signature')

    // Domains the token does not have: mainnet's name, another chain.
    for (const domain of [{ name: 'USD Coin' }, { chainId: 8453 }, { version: '1' }]) {
      const wrong = await signTransferAuthorization(buyer, { to: seller, value: 1n, domain })
      expect(await revertReason(() => submitVrs(wrong))).toBe('FiatTokenV2: invalid signature')
    }

    const tampered = await signTransferAuthorization(buyer, { to: seller, value: 1n })
    tampered.authorization.value = '2'
    expect(await revertReason(() => submitVrs(tampered))).toBe('FiatTokenV2: invalid signature')

    // The same signature with s' = n − s and flipped v recovers the same address: refused (EIP-2).
    const good = await signTransferAuthorization(buyer, { to: seller, value: 1n })
    const { r, s, v } = parseSignature(good.signature)
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
    const highS = `0x${r.slice(2)}${(n - BigInt(s)).toString(16).padStart(64, '0')}${(v === 27n ? 28 : 27).toString(16)}` as Hex
    expect(await revertReason(() => submitBytes({ ...good, signature: highS }))).toBe("ECRecover: invalid signature 's' value")

    const overdrawn = await signTransferAuthorization(buyer, { to: seller, value: USDC + 1n })
    expect(await revertReason(() => submitVrs(overdrawn))).toBe('ERC20: transfer amount exceeds balance')

    expect(await chain.balanceOf(buyer.address)).toBe(USDC)
    expect(await chain.authorizationState(buyer.address, good.authorization.nonce)).toBe(false)
  })
})

describe('ERC-1271 contract signers', () => {
  // Runtime code of a "wallet" whose isValidSignature answers `word` for any input: PUSH32 word, PUSH1 0, MSTORE,
  // PUSH1 32, PUSH1 0, RETURN.
  const walletCode = (word: Hex) => `0x7f${word.slice(2)}60005260206000f3` as Hex
  const MAGIC = `0x1626ba7e${'0'.repeat(56)}` as Hex

  test('a contract payer is checked with isValidSignature, on chain and by the x402 facilitator', async () => {
    const approving = privateKeyToAccount(generatePrivateKey()).address
    const refusing = privateKeyToAccount(generatePrivateKey()).address
    await chain.testClient.setCode({ address: approving, bytecode: walletCode(MAGIC) })
    await chain.testClient.setCode({ address: refusing, bytecode: walletCode(`0x${'0'.repeat(64)}`) })
    await chain.fundBuyer(approving, 100n)
    await chain.fundBuyer(refusing, 100n)
    const seller = privateKeyToAccount(generatePrivateKey()).address
    const now = BigInt(Math.floor(Date.now() / 1000))
    const transfer = (from: Hex, nonce: Hex) =>
      chain.walletClient.writeContract({
        address: chain.usdc,
        abi: usdcAbi,
        functionName: 'transferWithAuthorization',
        args: [from, seller, 60n, 0n, now + 300n, nonce, '0x1234'],
      })
    expect(await revertReason(() => transfer(refusing, generatePrivateKey()))).toBe('FiatTokenV2: invalid signature')
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash: await transfer(approving, generatePrivateKey()) })
    expect(receipt.status).toBe('success')
    expect(await chain.balanceOf(seller)).toBe(60n)

    // The facilitator takes the same path: ERC-1271 check, then the bytes-signature overload.
    const facilitator = makeFacilitator()
    const payment = (from: Hex) => ({
      x402Version: 1,
      scheme: 'exact',
      network: 'base-sepolia',
      payload: {
        signature: '0x1234',
        authorization: { from, to: seller, value: '40', validAfter: '0', validBefore: String(now + 300n), nonce: generatePrivateKey() },
      },
    })
    const requirements = {
      scheme: 'exact',
      network: 'base-sepolia',
      maxAmountRequired: '40',
      resource: 'http://127.0.0.1/x',
      description: '',
      mimeType: 'text/plain',
      payTo: seller,
      maxTimeoutSeconds: 300,
      asset: chain.usdc,
      extra: { name: 'USDC', version: '2' },
    }
    expect((await facilitator.verify(payment(refusing) as any, requirements as any)).invalidReason).toBe('invalid_exact_evm_signature')
    expect(await facilitator.settle(payment(approving) as any, requirements as any)).toMatchObject({ success: true, payer: approving })
    expect(await chain.balanceOf(seller)).toBe(100n)
  })
})

describe('@x402 facilitator on the local chain', () => {
  const v1Requirements = (payTo: string, amount: bigint) => ({
    scheme: 'exact',
    network: 'base-sepolia',
    maxAmountRequired: amount.toString(),
    resource: 'http://127.0.0.1/x',
    description: '',
    mimeType: 'text/plain',
    payTo,
    maxTimeoutSeconds: 300,
    asset: chain.usdc,
    extra: { name: 'USDC', version: '2' },
  })

  test('v1 exact (network base-sepolia): verify, settle, then the replay is refused', async () => {
    const facilitator = makeFacilitator()
    const buyer = await chain.newFundedBuyer(USDC)
    const seller = privateKeyToAccount(generatePrivateKey()).address
    const requirements = v1Requirements(seller, 10_000n)
    const payment = await v1Payment(buyer, { to: seller, value: 10_000n })

    expect(await facilitator.verify(payment as any, requirements as any)).toEqual({
      isValid: true,
      invalidReason: undefined,
      payer: buyer.address,
    })

    const started = performance.now()
    const settled = await facilitator.settle(payment as any, requirements as any)
    const settleMs = Math.round(performance.now() - started)
    expect(settled as object).toEqual({
      success: true,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      network: 'base-sepolia',
      payer: buyer.address,
    })
    expect(await chain.balanceOf(seller)).toBe(10_000n)
    expect(await chain.authorizationState(buyer.address, payment.payload.authorization.nonce)).toBe(true)
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: settled.transaction as Hex })
    expect(receipt.from as string).toBe(chain.relayer.address.toLowerCase())
    console.log(`v1 settle on anvil: ${settleMs} ms`)

    // Replay: verify simulates the transfer and explains the failure through Multicall3.
    expect(await facilitator.verify(payment as any, requirements as any)).toEqual({
      isValid: false,
      invalidReason: 'invalid_exact_evm_nonce_already_used',
      payer: buyer.address,
    })
    // settle does not simulate by default: the relayer's transaction fails at gas estimation; the reason is
    // viem's long error message.
    const replay = await facilitator.settle(payment as any, requirements as any)
    expect(replay.success).toBe(false)
    expect(replay.transaction).toBe('')
    expect(replay.errorReason).toContain('FiatTokenV2: authorization is used or canceled')
    expect(await chain.balanceOf(seller)).toBe(10_000n)
  })

  test('v1: insufficient balance, wrong amount, wrong recipient, bad signature, expired, unknown network', async () => {
    const facilitator = makeFacilitator()
    const buyer = await chain.newFundedBuyer(5_000n)
    const seller = privateKeyToAccount(generatePrivateKey()).address
    const requirements = v1Requirements(seller, 10_000n)
    const verify = async (payment: unknown, reqs: unknown = requirements) => facilitator.verify(payment as any, reqs as any)

    const poor = await v1Payment(buyer, { to: seller, value: 10_000n })
    expect(await verify(poor)).toEqual({ isValid: false, invalidReason: 'invalid_exact_evm_insufficient_balance', payer: buyer.address })
    const poorSettle = await facilitator.settle(poor as any, requirements as any)
    expect(poorSettle.success).toBe(false)
    expect(poorSettle.errorReason).toContain('ERC20: transfer amount exceeds balance')

    await chain.fundBuyer(buyer.address, USDC)
    const reason = async (payment: unknown, reqs: unknown = requirements) => (await verify(payment, reqs)).invalidReason
    expect(await reason(await v1Payment(buyer, { to: seller, value: 9_999n }))).toBe('invalid_exact_evm_authorization_value')
    expect(await reason(await v1Payment(buyer, { to: seller, value: 10_001n }))).toBe('invalid_exact_evm_authorization_value')
    expect(await reason(await v1Payment(buyer, { to: chain.relayer.address, value: 10_000n }))).toBe('invalid_exact_evm_recipient_mismatch')
    expect(await reason(await v1Payment(buyer, { to: seller, value: 10_000n, domain: { name: 'USD Coin' } }))).toBe(
      'invalid_exact_evm_signature',
    )
    const now = BigInt(Math.floor(Date.now() / 1000))
    expect(await reason(await v1Payment(buyer, { to: seller, value: 10_000n, validBefore: now + 5n }))).toBe(
      'invalid_exact_evm_payload_authorization_valid_before',
    )
    // A payment for Base mainnet against base-sepolia requirements.
    expect(await reason(await v1Payment(buyer, { to: seller, value: 10_000n, network: 'base', domain: { chainId: 8453 } }))).toBe(
      'invalid_exact_evm_network_mismatch',
    )
    // An unregistered (CAIP-2) network in v1 requirements: the facilitator throws rather than answering.
    await expect(
      verify(await v1Payment(buyer, { to: seller, value: 10_000n }), { ...requirements, network: 'eip155:84532' }),
    ).rejects.toThrow(/No facilitator registered/)
  })

  test('v2 exact (network eip155:84532) verifies and settles too', async () => {
    const facilitator = makeFacilitator()
    const buyer = await chain.newFundedBuyer(USDC)
    const seller = privateKeyToAccount(generatePrivateKey()).address
    const accepted = {
      scheme: 'exact',
      network: 'eip155:84532',
      amount: '20000',
      asset: chain.usdc,
      payTo: seller,
      maxTimeoutSeconds: 300,
      extra: { name: 'USDC', version: '2' },
    }
    const payload = await signTransferAuthorization(buyer, { to: seller, value: 20_000n, validAfter: 0n })
    const payment = { x402Version: 2, resource: { url: 'http://127.0.0.1/x', description: '', mimeType: 'text/plain' }, accepted, payload }
    expect(await facilitator.verify(payment as any, accepted as any)).toEqual({
      isValid: true,
      invalidReason: undefined,
      payer: buyer.address,
    })
    const settled = await facilitator.settle(payment as any, accepted as any)
    expect(settled).toMatchObject({ success: true, network: 'eip155:84532', payer: buyer.address })
    expect(await chain.balanceOf(seller)).toBe(20_000n)
    const replay = await facilitator.verify(payment as any, accepted as any)
    expect(replay.isValid).toBe(false)
    expect(replay.invalidReason).toBe('invalid_exact_evm_nonce_already_used')
  })
})

describe('chain lifecycle', () => {
  test('restart keeps the state and the address; kill makes the RPC unreachable until restart', async () => {
    const buyer = await chain.newFundedBuyer(42n)
    const url = chain.rpcUrl
    const started = performance.now()
    await chain.restart()
    const restartMs = Math.round(performance.now() - started)
    expect(chain.rpcUrl).toBe(url)
    expect(await chain.balanceOf(buyer.address)).toBe(42n)
    await chain.fundBuyer(buyer.address, 1n)
    expect(await chain.balanceOf(buyer.address)).toBe(43n)

    await chain.kill()
    await expect(chain.publicClient.getBalance({ address: buyer.address })).rejects.toThrow()
    await chain.restart()
    // A crash loses what came after the last graceful stop; the contracts are put back in place.
    expect(await chain.balanceOf(buyer.address)).toBe(42n)
    expect(await chain.publicClient.readContract({ address: chain.usdc, abi: usdcAbi, functionName: 'name' })).toBe('USDC')
    console.log(`anvil graceful restart with state: ${restartMs} ms`)
  })
})
