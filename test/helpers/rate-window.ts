import { setTimeout as sleep } from 'node:timers/promises';
import { RATE_WINDOW_SECONDS } from '../../api/rate-limiter.ts';

/**
 * Rate budgets count in fixed windows (whole minutes since the epoch): a test that spends a budget
 * and expects the next request refused starts well inside one, so that its count cannot start
 * again between the two. (A fresh clone's tus test once had its third request fall one second
 * into the next minute, and answered 200.)
 */
export async function intoFreshRateWindow(needSeconds = 15) {
  const windowMs = RATE_WINDOW_SECONDS * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < needSeconds * 1000) await sleep(left + 500);
}
