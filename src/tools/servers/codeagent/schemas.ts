/**
 * The code-agent server's arguments (contract 4.8) and connection credentials, as zod schemas. Every
 * rule the backend would enforce is checked here first, so a bad call is refused with the field it
 * concerns before anything is sent: image count, size, encoding and type; one repository entry;
 * the envVars limits; the option pairs that only make sense together. Rules JSON Schema can say
 * within one object (a repository entry's `url` or `prUrl`) are in the generated schema through
 * `meta`; rules across top-level fields are in the field descriptions and in `superRefine`.
 */
import { z } from 'zod';

export const CODEAGENT_APPLICATION = 'codeagent';
export const DEFAULT_BASE_URL = 'https://api.cursor.com';

export const CodeAgentCredentialsSchema = z.object({
  apiKey: z.string().min(1).max(1000),
  baseUrl: z.url({ protocol: /^https?$/ }).max(2000).default(DEFAULT_BASE_URL),
  authScheme: z.enum(['basic', 'bearer']).default('basic'),
}).strict();
export type CodeAgentCredentials = z.infer<typeof CodeAgentCredentialsSchema>;

export const MAX_IMAGES = 5;
export const MAX_IMAGE_BYTES = 15 * 1024 * 1024;
export const MAX_PROMPT_TEXT_CHARS = 1_000_000;
/** An image's fields besides its data, as JSON (keys, mimeType, dimension), with room to spare. */
const IMAGE_FIELDS_JSON_BYTES = 256;
/** Every argument of a prompt call besides the prompt (repos, model, envVars, …) as JSON: each bounded far below this. */
const OTHER_ARGUMENTS_JSON_BYTES = 4 * 1024 * 1024;
/** The base64 text of `bytes` bytes, padded. */
const base64Chars = (bytes: number): number => Math.ceil(bytes / 3) * 4;
/**
 * The most bytes the arguments of a call with a prompt (create agent, create run) can take as
 * JSON: the images' base64 text and fields, the text with every character escaped (`\uXXXX`, 6
 * bytes), and the other arguments. About 110 MiB; the HTTP gateway's body limit for codeagent follows.
 */
export const MAX_PROMPT_CALL_JSON_BYTES = MAX_IMAGES * (base64Chars(MAX_IMAGE_BYTES) + IMAGE_FIELDS_JSON_BYTES) + 6 * MAX_PROMPT_TEXT_CHARS + OTHER_ARGUMENTS_JSON_BYTES;
/** The vendor reserves names starting with this for its own variables. */
export const RESERVED_ENV_PREFIX = 'CURSOR_';
export const MAX_ENV_NAME_BYTES = 1024;
export const MAX_ENV_VALUE_BYTES = 4096;
export const MAX_ENV_VARS = 50;

type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** The image type by its first bytes; undefined for anything else. */
export function imageTypeOf(bytes: Buffer): ImageType | undefined {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  const head = bytes.subarray(0, 6).toString('latin1');
  if (head === 'GIF87a' || head === 'GIF89a') return 'image/gif';
  if (bytes.length >= 12 && bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return undefined;
}

// a character class and a length check, not a grouped pattern: that would recurse over megabytes of text
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;
const isBase64 = (text: string): boolean => text.length % 4 === 0 && BASE64_CHARS.test(text);

const ImageSchema = z.object({
  data: z.string().min(1).meta({ contentEncoding: 'base64' })
    .describe(`the image, base64-encoded (standard alphabet, padded); png, jpeg, gif or webp; at most ${MAX_IMAGE_BYTES} bytes decoded`),
  mimeType: z.enum(['image/png', 'image/jpeg', 'image/gif', 'image/webp']).optional().describe('the image type; when given it must match the data'),
  dimension: z.object({ width: z.number().int().min(1), height: z.number().int().min(1) }).strict().optional(),
}).strict().superRefine((image, ctx) => {
  // Everything follows from the text, never decoded whole: its length and padding give the size,
  // its first characters the type. Decoding five 15 MB images only to look at them held the
  // event loop for 30 ms on an idle machine, 0.4 s on a loaded one.
  const { data } = image;
  if (Math.floor((data.length * 3) / 4) > MAX_IMAGE_BYTES + 2) {
    ctx.addIssue({ code: 'custom', path: ['data'], message: `the image is larger than ${MAX_IMAGE_BYTES} bytes` });
    return;
  }
  if (!isBase64(data)) {
    ctx.addIssue({ code: 'custom', path: ['data'], message: 'is not valid base64' });
    return;
  }
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  if ((data.length / 4) * 3 - padding > MAX_IMAGE_BYTES) {
    ctx.addIssue({ code: 'custom', path: ['data'], message: `the image is larger than ${MAX_IMAGE_BYTES} bytes` });
    return;
  }
  // 16 characters are 12 bytes: as many as imageTypeOf reads
  const type = imageTypeOf(Buffer.from(data.slice(0, 16), 'base64'));
  if (type === undefined) ctx.addIssue({ code: 'custom', path: ['data'], message: 'is not a png, jpeg, gif or webp image' });
  else if (image.mimeType !== undefined && image.mimeType !== type) ctx.addIssue({ code: 'custom', path: ['mimeType'], message: `says ${image.mimeType} but the data is ${type}` });
});

export const PromptSchema = z.object({
  text: z.string().min(1).max(MAX_PROMPT_TEXT_CHARS).describe('the instruction'),
  images: z.array(ImageSchema).max(MAX_IMAGES).optional().describe(`at most ${MAX_IMAGES} images`),
}).strict();

const RepoSchema = z.object({
  url: z.string().min(1).max(2000).optional().describe('the repository URL; required unless prUrl is given'),
  startingRef: z.string().min(1).max(500).optional().describe('branch, tag or commit to start from (ignored with prUrl)'),
  prUrl: z.url({ protocol: /^https?$/ }).max(2000).optional()
    .describe('a pull request URL: the agent works on its repository and branch; url and startingRef are then ignored'),
}).strict().meta({ anyOf: [{ required: ['url'] }, { required: ['prUrl'] }] }).superRefine((repo, ctx) => {
  if (repo.url === undefined && repo.prUrl === undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: 'is required unless prUrl is given' });
});

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

const EnvVarsSchema = z.record(z.string(), z.string()).superRefine((vars, ctx) => {
  const names = Object.keys(vars);
  if (names.length > MAX_ENV_VARS) ctx.addIssue({ code: 'custom', path: [], message: `at most ${MAX_ENV_VARS} variables` });
  for (const name of names) {
    // issues name the variable, never its value: values are secrets
    if (name === '') ctx.addIssue({ code: 'custom', path: [name], message: 'a variable name must not be empty' });
    else if (utf8Bytes(name) > MAX_ENV_NAME_BYTES) ctx.addIssue({ code: 'custom', path: [name.slice(0, 40)], message: `the name is longer than ${MAX_ENV_NAME_BYTES} bytes` });
    else if (name.startsWith(RESERVED_ENV_PREFIX)) ctx.addIssue({ code: 'custom', path: [name], message: `names starting with ${RESERVED_ENV_PREFIX} are reserved` });
    const value = vars[name] ?? '';
    if (value === '') ctx.addIssue({ code: 'custom', path: [name], message: 'the value must not be empty' });
    else if (utf8Bytes(value) > MAX_ENV_VALUE_BYTES) ctx.addIssue({ code: 'custom', path: [name], message: `the value is longer than ${MAX_ENV_VALUE_BYTES} bytes` });
  }
}).meta({ maxProperties: MAX_ENV_VARS, propertyNames: { minLength: 1, not: { pattern: `^${RESERVED_ENV_PREFIX}` } } })
  .describe(`session-scoped environment variables for the agent's shell (at most ${MAX_ENV_VARS}), encrypted at rest and deleted with the agent; `
    + `names non-empty, at most ${MAX_ENV_NAME_BYTES} bytes, not starting with ${RESERVED_ENV_PREFIX}; values non-empty, at most ${MAX_ENV_VALUE_BYTES} bytes`);

const ModelSchema = z.object({
  id: z.string().min(1).max(200).describe('a model id from codeagent_list_models'),
  params: z.array(z.object({ id: z.string().min(1).max(200), value: z.string().max(1000) }).strict()).max(50).optional()
    .describe('per-model parameters, only those the model supports'),
}).strict();

export const CreateAgentInput = z.object({
  prompt: PromptSchema.describe('the task: text and optional images'),
  repos: z.array(RepoSchema).length(1).describe('exactly one repository entry'),
  model: ModelSchema.optional().describe('leave out for the default model'),
  autoCreatePR: z.boolean().optional().describe('open a pull request when the run completes'),
  autoGenerateBranch: z.boolean().optional()
    .describe('only with repos[0].prUrl: true creates a new branch, false pushes to the pull request\'s head branch'),
  branchName: z.string().min(1).max(255).optional().describe('a custom branch name to create'),
  skipReviewerRequest: z.boolean().optional().describe('only with autoCreatePR: true; skip requesting the user as reviewer'),
  envVars: EnvVarsSchema.optional(),
}).strict().superRefine((args, ctx) => {
  if (args.autoGenerateBranch !== undefined && args.repos[0]?.prUrl === undefined) {
    ctx.addIssue({ code: 'custom', path: ['autoGenerateBranch'], message: 'applies only when repos[0].prUrl is given' });
  }
  if (args.skipReviewerRequest !== undefined && args.autoCreatePR !== true) {
    ctx.addIssue({ code: 'custom', path: ['skipReviewerRequest'], message: 'applies only when autoCreatePR is true' });
  }
});
export type CreateAgentArgs = z.infer<typeof CreateAgentInput>;

const agentId = z.string().min(1).max(200).regex(/^[A-Za-z0-9_.-]+$/, 'must be an agent id such as bc-…').describe('the agent id (bc-…)');
const runId = z.string().min(1).max(200).regex(/^[A-Za-z0-9_.-]+$/, 'must be a run id such as run-…').describe('the run id (run-…)');
const limit = z.number().int().min(1).max(100).optional().describe('page size, 1 to 100 (default 20)');
const cursor = z.string().min(1).max(2000).optional().describe('the nextCursor of the previous page');

export const AgentInput = z.object({ id: agentId }).strict();
export const RunInput = z.object({ id: agentId, runId }).strict();
export const NoInput = z.object({}).strict();

export const CreateRunInput = z.object({
  id: agentId,
  prompt: PromptSchema.describe('the follow-up instruction: text and optional images'),
}).strict();

export const ListRunsInput = z.object({ id: agentId, limit, cursor }).strict();

export const ListAgentsInput = z.object({
  limit,
  cursor,
  prUrl: z.url({ protocol: /^https?$/ }).max(2000).optional().describe('only agents working on this pull request'),
  includeArchived: z.boolean().optional().describe('include archived agents'),
}).strict();

export const DownloadArtifactInput = z.object({
  id: agentId,
  path: z.string().min(1).max(1000).regex(/^artifacts\//, 'must be a relative path under artifacts/')
    .describe('the artifact\'s path as codeagent_list_artifacts gives it: relative, under artifacts/, no ..'),
  store: z.boolean().default(false)
    .describe('false: answer the backend\'s presigned URL (valid about 15 minutes); true: copy the file into flowgate and answer a signed flowgate link'),
}).strict().superRefine((args, ctx) => {
  const segments = args.path.split('/');
  if (segments.some((s) => s === '..' || s === '.') || args.path.includes('\\') || segments.slice(1).some((s) => s === '')) {
    ctx.addIssue({ code: 'custom', path: ['path'], message: 'must not contain .., . or empty segments' });
  }
});

export const MAX_STREAM_WAIT_SECONDS = 55;
export const DEFAULT_STREAM_WAIT_SECONDS = 20;

export const StreamRunInput = z.object({
  id: agentId,
  runId,
  'Last-Event-ID': z.string().min(1).max(200).regex(/^[\x21-\x7e]+$/, 'must be an event id').optional()
    .describe('resume after this event id (the lastEventId of the previous call)'),
  waitSeconds: z.number().int().min(1).max(MAX_STREAM_WAIT_SECONDS).default(DEFAULT_STREAM_WAIT_SECONDS)
    .describe(`how long to read before answering when the run goes on (default ${DEFAULT_STREAM_WAIT_SECONDS}, at most ${MAX_STREAM_WAIT_SECONDS})`),
}).strict();

export const CreateSubTokenInput = z.object({
  forUserEmail: z.email().max(320).optional().describe('a team member\'s e-mail (case-insensitive); not together with forUserId'),
  forUserId: z.number().int().min(1).optional().describe('a team member\'s user id; not together with forUserEmail'),
}).strict().superRefine((args, ctx) => {
  if (args.forUserEmail !== undefined && args.forUserId !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['forUserId'], message: 'forUserEmail and forUserId are mutually exclusive' });
  }
});
