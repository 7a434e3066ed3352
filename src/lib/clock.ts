// One clock for the whole server, in Unix seconds. Tests shift it through the server's test-only offset.
let offsetSeconds = 0

export const nowSeconds = (): number => Math.floor(Date.now() / 1000) + offsetSeconds
export const setClockOffset = (seconds: number): void => {
  offsetSeconds = seconds
}
