// Why a payment is refused, as x402 reason codes (the packages' names, with a short explanation after a colon
// where ours adds one). They travel in the 402 body's `error` and the settlement header's `errorReason`.
export const REASONS = {
  noPayment: 'X-PAYMENT header is required',
  notBase64Json: 'invalid_payload: the payment header is not base64 JSON',
  invalidPayload: 'invalid_payload',
  invalidVersion: 'invalid_x402_version',
  missingAuthorization: 'invalid_payload: missing authorization or signature',
  fieldsNotStrings: 'invalid_payload: authorization fields must be strings',
  badAddress: 'invalid_payload: bad address',
  badNumber: 'invalid_payload: bad number',
  badNonce: 'invalid_payload: bad nonce',
  scheme: 'invalid_scheme',
  network: 'invalid_network',
  recipient: 'invalid_exact_evm_payload_recipient_mismatch',
  expiresTooSoon: 'invalid_exact_evm_payload_authorization_valid_before: the authorization expires too soon',
  notYetValid: 'invalid_exact_evm_payload_authorization_valid_after',
  alreadyBought: 'payment_already_settled: this authorization already bought this entry; sign in as the payer to read it again',
  passAlreadyBought: 'payment_already_settled: this authorization already bought this pass; it is listed at GET /v1/passes',
  usedForAnother: 'duplicate_settlement: this authorization was already used for another purchase',
  inUse: 'duplicate_settlement: this authorization is being used by another request',
  canceled: 'authorization_canceled: the payer cancelled this authorization',
  usedElsewhere: 'authorization_used_elsewhere: the payer spent this authorization on another transfer',
  reverted: 'settlement_reverted: the settling transaction did not go through',
  expired: 'payment_expired: the authorization expired unused',
  settlementFailed: 'settlement_failed',
  backendUnavailable: 'payment_backend_unavailable',
  sentPending: 'settlement_pending: this payment was sent for settlement; it is recorded once the chain shows it',
  purchasePending: (what: 'entry' | 'pass') =>
    `settlement_pending: another payment from this wallet for this ${what === 'pass' ? "feed's pass" : 'entry'} is being ` +
    'settled; nothing was charged for this one, retry it once that one is decided',
  notConfirmed: 'settlement_pending: the settlement is not confirmed yet; it is recorded once the chain shows it',
} as const

/** The authorization's value is not the price: say what the entry costs now (it may have changed since the 402). */
export const valueIsNotPrice = (amount: string) =>
  `invalid_exact_evm_payload_authorization_value: the price is ${amount} (smallest unit) now; ask for the 402 again`

export const tooFarAhead = (seconds: number) =>
  `invalid_exact_evm_payload_authorization_valid_before: validBefore may be at most ${seconds} s ahead`
