// Retry schedule of outbound calls (push notifications, provider commands): exponential backoff
// from a base delay, capped, with the attempt count after which the call is given up.

export const MAX_RETRY_DELAY_SECONDS = 3600;

/** Seconds to wait before attempt number `attempts + 1`, after `attempts` failed ones (>= 1). */
export function retryDelaySeconds(attempts: number, baseSeconds: number): number {
  const exponent = Math.max(0, attempts - 1);
  // 2^exponent overflows nothing relevant before the cap: stop doubling once past it.
  const delay = exponent >= 20 ? MAX_RETRY_DELAY_SECONDS : baseSeconds * 2 ** exponent;
  return Math.min(MAX_RETRY_DELAY_SECONDS, delay);
}

export type RetryVerdict = { retry: true; delaySeconds: number } | { retry: false };

export function afterFailure(attempts: number, maxAttempts: number, baseSeconds: number): RetryVerdict {
  return attempts >= maxAttempts ? { retry: false } : { retry: true, delaySeconds: retryDelaySeconds(attempts, baseSeconds) };
}
