// The browser element <postcode-otp> (browser/postcode-otp.js), served by the Worker for any site to load: the
// current file, a copy named by its content hash to cache for good, and a manifest naming it with its SRI value.
import { z } from '@hono/zod-openapi';
import otpElement from '../../vendor/sdk/otp.js.gz';
import built from '../../vendor/sdk/otp.json';
import { anyone } from '../auth/guards';
import { ApiError } from '../errors';
import { linkTo } from '../openapi/document';
import { gzippedResponse } from './gzipped';
import { route, router } from './route';

const HASHED = `otp.${built.hash}.js`;
/** Any origin may load it: a module script from another origin is fetched with CORS. */
const OPEN = { 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' };
const JAVASCRIPT = { 'text/javascript': { schema: { type: 'string' as const } } };

const manifestSchema = z
  .object({
    files: z.object({
      'otp.js': z.object({
        file: z.string().openapi({ description: 'The content-hashed name, cached for good' }),
        path: z.string(),
        integrity: z.string().openapi({ description: 'The Subresource Integrity value (sha384) of its bytes' }),
        bytes: z.number().int(),
        gzipBytes: z.number().int(),
      }),
    }),
  })
  .openapi({ description: "The SDK's files" });

const manifest = () => ({
  files: {
    'otp.js': {
      file: HASHED,
      path: `/sdk/v1/${HASHED}`,
      integrity: built.integrity,
      bytes: built.bytes,
      gzipBytes: built.gzipBytes,
    },
  },
});

const current = route({
  method: 'get',
  path: '/sdk/v1/otp.js',
  tag: 'Instant OTP',
  summary: 'The <postcode-otp> element (an ES module), as it is now',
  description:
    'Load it with `<script type="module" src="…/sdk/v1/otp.js">`; cached for 5 minutes. For a copy that never changes, with an integrity value, see the manifest.',
  guard: anyone,
  success: { status: 200, description: 'JavaScript', content: JAVASCRIPT },
});

const hashed = route({
  method: 'get',
  path: '/sdk/v1/{file}',
  tag: 'Instant OTP',
  summary: 'The <postcode-otp> element under its content-hashed name (cached for good)',
  description: 'The name is the one the manifest gives; any other is 404.',
  guard: anyone,
  params: z.object({ file: z.string().max(64).openapi({ example: 'otp.0123456789abcdef.js' }) }),
  success: { status: 200, description: 'JavaScript', content: JAVASCRIPT },
  errors: ['NOT_FOUND'],
});

const manifestRoute = route({
  method: 'get',
  path: '/sdk/v1/manifest.json',
  tag: 'Instant OTP',
  summary: "The element's content-hashed file with its SRI value",
  guard: anyone,
  success: {
    status: 200,
    description: 'The manifest',
    content: {
      'application/json': {
        schema: manifestSchema,
        example: {
          files: {
            'otp.js': {
              file: 'otp.0123456789abcdef.js',
              path: '/sdk/v1/otp.0123456789abcdef.js',
              integrity: 'sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC',
              bytes: 19_599,
              gzipBytes: 7_128,
            },
          },
        },
      },
    },
    links: { hashed: linkTo('get', '/sdk/v1/{file}', { parameters: { file: '$response.body#/files/otp.js/file' } }) },
  },
});

const script = (acceptEncoding: string | undefined, cacheControl: string) =>
  gzippedResponse(otpElement, acceptEncoding, {
    ...OPEN,
    'Content-Type': 'text/javascript; charset=utf-8',
    'Cache-Control': cacheControl,
  });

export const sdkRoutes = router()
  .openapi(current, (c) => script(c.req.header('Accept-Encoding'), 'public, max-age=300') as never)
  .openapi(manifestRoute, (c) => c.json(manifest(), 200, { ...OPEN, 'Cache-Control': 'public, max-age=300' }))
  .openapi(hashed, (c) => {
    if (c.req.valid('param').file !== HASHED) throw new ApiError('NOT_FOUND', 'file: no such file of the SDK');
    return script(c.req.header('Accept-Encoding'), 'public, max-age=31536000, immutable') as never;
  });
