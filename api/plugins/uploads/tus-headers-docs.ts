import type { OpenApiHeader } from '../../types.ts';

// The tus headers as the OpenAPI document describes them, declared once for every tus route.

export const TUS_RESUMABLE_HEADER: OpenApiHeader = {
  description: 'The tus version the client speaks: `1.0.0` (412 otherwise).',
  required: true,
  schema: { type: 'string', const: '1.0.0' },
};

export const TUS_HEADER_DOCS = {
  'Tus-Resumable': 'The tus version of the answer: `1.0.0`.',
  'Upload-Offset': 'How many bytes of the file are stored: where the next PATCH starts.',
  'Upload-Length': "The file's declared size.",
  'Upload-Expires': 'Until when the upload URL takes bytes (an HTTP date).',
  'Upload-Metadata': "The declared file's `filename`/`name` and `filetype`/`type`, base64 (tus `Upload-Metadata`).",
  Location: 'The upload URL itself: PATCH it.',
  'Tus-Version': 'The tus versions this server speaks: `1.0.0`.',
  'Tus-Extension': 'creation, creation-with-upload, termination, checksum, expiration.',
  'Tus-Max-Size': "The largest upload this URL takes: its file's declared size.",
  'Tus-Checksum-Algorithm': 'The `Upload-Checksum` algorithms: sha256, sha512, sha1, md5.',
} as const;

/** Why the tus routes have no SDK method: the SDK resumes its uploads with PUT. */
export const TUS_SDK_EXCLUSION = {
  excluded:
    "tus, for tus clients (tus-js-client, Uppy's tus plugin): the SDK resumes uploads with PUT and Content-Range",
} as const;
