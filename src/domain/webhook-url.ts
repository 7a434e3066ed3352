// What a webhook endpoint's URL may be: https, on the public internet (its host resolves to public addresses only),
// without user:password; on a development server that allows local webhooks (TRELLIS_WEBHOOKS_ALLOW_LOCAL, on
// loopback only: server.ts), http and loopback or private hosts too. A refusal says which rule the URL broke, in words.
import { PublicFetchFailed, timeLimit, vettedAddresses } from '../lib/public-fetch.ts'
import { fail } from './errors.ts'

/**
 * `raw` when it is an https URL (http too, on a server that allows local webhooks), without user:password, whose host
 * resolves to public addresses only (any, on such a server, or with the test hook); checked again at every attempt:
 * DNS may change. Refused with a reason in words.
 */
export async function endpointUrl(raw: string, allowPrivate: boolean, local: boolean): Promise<string> {
  const rule = local ? 'url must be an http or https URL' : 'url must be an https URL on the public internet'
  const invalid = (details: string): never => fail('INVALID_WEBHOOK_URL', rule, details)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return invalid('it is not a URL')
  }
  if (url.protocol !== 'https:' && !(local && url.protocol === 'http:'))
    invalid(url.protocol === 'http:' ? 'plain http is refused: deliveries go over https only' : 'it is not an https URL')
  if (url.username || url.password) invalid('it must not hold a user:password')
  if (!url.hostname) invalid('it names no host')
  try {
    await vettedAddresses(url.hostname, allowPrivate || local, timeLimit(5_000).deadline)
  } catch (error) {
    if (!(error instanceof PublicFetchFailed)) throw error
    invalid(
      error.kind === 'not-public'
        ? 'its host is a loopback, private, link-local or reserved address, or resolves to one'
        : 'its host name does not resolve',
    )
  }
  return url.href
}
