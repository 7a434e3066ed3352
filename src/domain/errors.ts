// Rule violations carry a stable code; edge/errors.ts maps codes to statuses.
export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: string,
    /** For a refusal that passes (a 429): the seconds its answer's Retry-After says. */
    readonly retryAfterS?: number,
  ) {
    super(message)
  }
}

export const fail = (code: string, message: string, details?: string): never => {
  throw new DomainError(code, message, details)
}
