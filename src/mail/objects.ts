// R2 objects of mail (bodies and attachments), deleted by key.

/** R2 deletes at most this many keys per call. */
const R2_DELETE_KEYS = 1_000;

/** Deletes objects by key, any number of them (none: no call). */
export async function deleteObjects(bucket: R2Bucket, keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += R2_DELETE_KEYS) await bucket.delete(keys.slice(i, i + R2_DELETE_KEYS));
}
