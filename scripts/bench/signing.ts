// Wallet sign-in for the write benchmarks: a nonce from the server, signed with a viem account (as an SDK would).
import { keccak256, stringToHex } from 'viem'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'

/** Deterministic signer keys: the same wallets every run (each run starts from a fresh copy of the data). */
export const signerKey = (i: number): `0x${string}` => keccak256(stringToHex(`trellis-bench-signer-${i}`))
export const signer = (key: `0x${string}`): PrivateKeyAccount => privateKeyToAccount(key)

/** The sign-in headers for one request; each call spends a fresh nonce. */
export async function authHeaders(url: string, account: PrivateKeyAccount): Promise<Record<string, string>> {
  const response = await fetch(`${url}/v1/auth/nonce`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wallet_address: account.address }),
  })
  if (response.status !== 200) throw new Error(`POST /v1/auth/nonce answered ${response.status}: ${await response.text()}`)
  const { message } = (await response.json()) as { message: string }
  return {
    'content-type': 'application/json',
    'x-wallet-address': account.address,
    'x-signature': await account.signMessage({ message }),
    'x-message': message,
    'x-timestamp': String(Math.floor(Date.now() / 1000)),
    'x-chain-id': '84532',
  }
}

/** Creates one feed per signer (fresh wallets: well under the 10-feed limit) and returns their ids. */
export async function signerFeeds(url: string, count: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const account = signer(signerKey(i))
    const response = await fetch(`${url}/v1/feeds`, {
      method: 'POST',
      headers: await authHeaders(url, account),
      body: JSON.stringify({ name: `bench writer ${i}`, tags: ['bench'] }),
    })
    const text = await response.text()
    if (response.status !== 201) throw new Error(`POST /v1/feeds answered ${response.status}: ${text.slice(0, 300)}`)
    ids.push((JSON.parse(text) as { id: string }).id)
  }
  return ids
}
