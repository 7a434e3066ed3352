// One clock for the whole server, in Unix seconds. Tests shift it through the server's test-only offset.
let offsetSeconds = 0

export const nowSeconds = (): number => Math.floor(Date.now() / 1000) + offsetSeconds
export const setClockOffset = (seconds: number): void => {
  offsetSeconds = seconds
}

/**
 * Wall-clock seconds, never shifted: payment authorizations are judged against it, as the chain and the x402
 * facilitator judge them (the test offset only moves the server's own records in time).
 */
export const wallClockSeconds = (): number => Math.floor(Date.now() / 1000)
