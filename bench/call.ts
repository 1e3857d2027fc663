// One JSON request the bench's set-up makes (creating websites, keys, funnels, probing a read):
// anything but a 200 is an error naming the request and the answer.

export interface CallAnswer {
  bytes: Buffer;
  contentType: string;
}

export type Call = (method: string, url: string, headers: Record<string, string>, body?: unknown) => Promise<CallAnswer>;

export const call: Call = async (method, url, headers, body) => {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`${method} ${url} answered ${response.status}: ${bytes}`);
  return { bytes, contentType: response.headers.get('content-type') ?? '' };
};

/** The first row of an answer's `data` envelope. */
export function firstRow<T>(answer: CallAnswer): T {
  return (JSON.parse(answer.bytes.toString()) as { data: T[] }).data[0]!;
}
