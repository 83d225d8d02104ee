// Attachments: which files are refused, how their bytes are read when an email is accepted (base64 or an
// https URL), and where they wait for delivery (R2, one object per attachment; the queue carries ids only).
import { fromBase64 } from '../base64';
import { ApiError } from '../errors';
import { checkOutboundUrl } from '../net/outbound-url';
import { readAtMost } from '../streams';
import { deleteObjects } from './objects';
import type { OutgoingAttachment } from './outgoing';

export const ATTACHMENT_LIMITS = { count: 20, bytes: 10_000_000 } as const;
/** How long an attachment URL may take to answer and send its bytes. */
const FETCH_TIMEOUT_MS = 10_000;

/** Executables, scripts and installers: what mail filters quarantine and no transactional mail needs. */
export const DANGEROUS_EXTENSIONS = new Set(
  (
    'exe com scr pif bat cmd js jse vbs vbe ws wsf wsc wsh msi msp mst msc cpl dll sys drv ocx jar ps1 ps1xml ' +
    'psm1 psd1 hta lnk reg inf scf sct shb gadget application appref-ms apk app dmg pkg sh bash csh ksh ' +
    'command iso img vhd vhdx chm'
  ).split(' '),
);
export const DANGEROUS_TYPES =
  /^(?:application\/(?:x-msdownload|x-msdos-program|x-ms-installer|x-msi|vnd\.microsoft\.portable-executable|x-dosexec|x-executable|x-sh|x-csh|java-archive|x-java-archive|javascript|x-javascript|ecmascript|hta|x-ms-shortcut|vnd\.android\.package-archive|x-apple-diskimage)|text\/(?:javascript|ecmascript|x-sh|vbscript|x-vbscript))$/i;

/** Whether a file name's extension or a media type is one we refuse. */
export function dangerousAttachment(filename: string, contentType: string | null): boolean {
  const extension = filename.includes('.') ? filename.split('.').pop()!.toLowerCase() : '';
  return DANGEROUS_EXTENSIONS.has(extension) || (contentType !== null && DANGEROUS_TYPES.test(contentType.trim()));
}

const MEDIA_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  txt: 'text/plain',
  csv: 'text/csv',
  html: 'text/html',
  ics: 'text/calendar',
  json: 'application/json',
  xml: 'application/xml',
  zip: 'application/zip',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

const mediaTypeOf = (filename: string) =>
  MEDIA_TYPES[filename.split('.').pop()?.toLowerCase() ?? ''] ?? 'application/octet-stream';

/** An attachment as stored with its email (the bytes are in R2 under `key`). */
export type AttachmentMeta = {
  filename: string;
  contentType: string;
  contentId: string | null;
  size: number;
  key: string;
};

export type AttachmentRequest = {
  filename: string;
  content?: string;
  path?: string;
  contentType?: string;
  contentId?: string;
};

/** An attachment read and checked, ready to be stored. */
export type LoadedAttachment = { meta: AttachmentMeta; bytes: Uint8Array };

/** Fetches an attachment URL (public https only, no redirects), reading at most `limit` bytes. */
async function fetchAttachment(url: string, limit: number, field: string, allowInsecure: boolean): Promise<Uint8Array> {
  const checked = checkOutboundUrl(url, allowInsecure);
  if (!checked.ok) throw new ApiError('INVALID_INPUT', `${field}: ${checked.reason}`);
  let response: Response;
  try {
    response = await fetch(checked.url, { redirect: 'manual', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  } catch {
    throw new ApiError('INVALID_INPUT', `${field}: the URL could not be fetched`);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new ApiError('INVALID_INPUT', `${field}: the URL answered ${response.status}, expected 200`);
  }
  let bytes: Uint8Array | null;
  try {
    bytes = await readAtMost(response.body, limit);
  } catch {
    throw new ApiError('INVALID_INPUT', `${field}: the URL could not be read`);
  }
  if (!bytes) throw tooBig();
  if (bytes.length === 0) throw new ApiError('INVALID_INPUT', `${field}: the URL answered an empty file`);
  return bytes;
}

const tooBig = () =>
  new ApiError('INVALID_INPUT', `attachments: at most ${ATTACHMENT_LIMITS.bytes / 1_000_000} MB per email`);

/**
 * Reads every attachment of a request (decodes base64, fetches URLs) within the per-email limit and
 * names where each will be stored. Throws 400 naming the attachment when one cannot be read.
 */
export async function loadAttachments(
  emailId: string,
  requests: AttachmentRequest[],
  allowInsecureUrls: boolean,
): Promise<LoadedAttachment[]> {
  const loaded: LoadedAttachment[] = [];
  let total = 0;
  for (const [index, request] of requests.entries()) {
    const field = `attachments[${index}]`;
    const bytes =
      request.content !== undefined
        ? fromBase64(request.content)
        : await fetchAttachment(request.path!, ATTACHMENT_LIMITS.bytes - total, `${field}.path`, allowInsecureUrls);
    total += bytes.length;
    if (total > ATTACHMENT_LIMITS.bytes) throw tooBig();
    const meta: AttachmentMeta = {
      filename: request.filename,
      contentType: request.contentType ?? mediaTypeOf(request.filename),
      contentId: request.contentId ?? null,
      size: bytes.length,
      key: `attachments/${emailId}/${index}`,
    };
    loaded.push({ meta, bytes });
  }
  return loaded;
}

export async function storeAttachments(bucket: R2Bucket, attachments: LoadedAttachment[]): Promise<void> {
  await Promise.all(
    attachments.map(({ meta, bytes }) =>
      bucket.put(meta.key, bytes, { httpMetadata: { contentType: meta.contentType } }),
    ),
  );
}

export const deleteAttachments = (bucket: R2Bucket, metas: AttachmentMeta[]) =>
  deleteObjects(
    bucket,
    metas.map((m) => m.key),
  );

/** The attachments of a stored email as the SMTP layer reads them: streamed from R2 at send time. */
export function outgoingAttachments(bucket: R2Bucket, metas: AttachmentMeta[]): OutgoingAttachment[] {
  return metas.map((meta) => ({
    filename: meta.filename,
    contentType: meta.contentType,
    contentId: meta.contentId,
    size: meta.size,
    open: async () => (await bucket.get(meta.key))?.body ?? null,
  }));
}
