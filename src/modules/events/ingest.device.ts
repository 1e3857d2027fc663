import Bowser from 'bowser';

// Browser, operating system and device class, read from the request's User-Agent header (the
// browser sets it; the payload's copy could say anything).

export interface DeviceInfo {
  browser: string | null;
  os: string | null;
  /** desktop, mobile, tablet or tv. */
  device: string | null;
}

const DEVICE_TYPES = new Set(['desktop', 'mobile', 'tablet', 'tv']);

export function parseDevice(userAgent: string): DeviceInfo {
  if (userAgent.trim() === '') return { browser: null, os: null, device: null };
  const parsed = Bowser.parse(userAgent);
  const type = parsed.platform.type ?? '';
  return {
    browser: parsed.browser.name || null,
    os: parsed.os.name || null,
    device: DEVICE_TYPES.has(type) ? type : null,
  };
}
