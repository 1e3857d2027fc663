// The one error type services throw. The error handler turns it into the contract's envelope.

export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly details?: ErrorDetail[],
    /** Sent as Retry-After (a 503 for a server that is busy, not broken). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (message: string, details?: ErrorDetail[]) => new AppError(400, message, details);
export const unauthorized = (message: string) => new AppError(401, message);
export const forbidden = (message: string) => new AppError(403, message);
export const notFound = (message: string) => new AppError(404, message);
export const conflict = (message: string) => new AppError(409, message);

/** A 400 that names the field, for rules a JSON Schema cannot express. */
export function invalidField(path: string, message: string): AppError {
  return badRequest(`${path}: ${message}`, [{ path, message }]);
}
