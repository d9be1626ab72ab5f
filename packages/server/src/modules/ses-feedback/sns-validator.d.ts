declare module 'sns-validator' {
  /** AWS's validator of SNS HTTP messages: certificate URL host check, certificate fetch (cached), signature. */
  export default class MessageValidator {
    constructor(hostPattern?: RegExp, encoding?: string);
    validate(
      message: Record<string, unknown>,
      callback: (err: Error | null, message?: Record<string, unknown>) => void,
    ): void;
  }
}
