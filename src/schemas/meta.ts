import { z } from 'zod';
import { envelope } from './common';

export const indexResponse = envelope(
  z.object({
    service: z.literal('postcode'),
    description: z.string(),
    version: z.string(),
    api: z.string(),
    openapi: z.string(),
    docs: z.string(),
    health: z.string(),
  }),
);
export const healthResponse = envelope(z.object({ status: z.literal('ok') }));
