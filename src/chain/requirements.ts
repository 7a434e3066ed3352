// The x402 payment requirement for one paid entry, in the v1 body form and the v2 header form.
import type { NetworkInfo } from '../config.ts'

export const MAX_TIMEOUT_SECONDS = 300

export interface PriceTag {
  amount: string // smallest unit
  payTo: string
  resource: string // absolute URL
  description: string
  mimeType: string
}

export function v1Requirement(network: NetworkInfo, tag: PriceTag) {
  return {
    scheme: 'exact' as const,
    network: network.name,
    maxAmountRequired: tag.amount,
    resource: tag.resource,
    description: tag.description,
    mimeType: tag.mimeType,
    payTo: tag.payTo,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    asset: network.usdcAddress,
    extra: { name: network.usdcName, version: network.usdcVersion },
  }
}

export function v2Challenge(network: NetworkInfo, tag: PriceTag, error: string) {
  return {
    x402Version: 2,
    error,
    resource: { url: tag.resource, description: tag.description, mimeType: tag.mimeType },
    accepts: [{
      scheme: 'exact',
      network: `eip155:${network.chainId}`,
      amount: tag.amount,
      asset: network.usdcAddress,
      payTo: tag.payTo,
      maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
      extra: { name: network.usdcName, version: network.usdcVersion },
    }],
  }
}
