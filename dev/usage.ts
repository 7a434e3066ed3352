// The scripts' usage line: printed with the reason when an argument is wrong, exit 2.
export const usageOf =
  (line: string) =>
  (message?: string): never => {
    if (message) console.error(message)
    console.error(`usage: ${line}`)
    process.exit(2)
  }
