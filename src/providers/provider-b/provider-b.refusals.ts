import { sanitizeUpstreamMessage } from '../../common/logging/request-log';

/**
 * Code Assist refusals whose fix is not a new login (docs/upstream/provider-b.md §4.2, §10.2):
 * what the operator does about each, for the client's message and the log line's `fix`.
 */
export const PROVIDER_B_FIXES = {
  provider_b_project_required:
    'this Google account has a Code Assist licence but no default project: set PROVIDER_B_PROJECT to the id of a Code Assist project it may use',
  provider_b_validation_required:
    'Google asks this account to be validated: open the Gemini CLI (`gemini`) once with it and follow the link it shows',
  provider_b_account_unsupported:
    'Code Assist does not serve this kind of Google account: use a Code Assist Standard or Enterprise licence with PROVIDER_B_PROJECT, or another family',
  provider_b_onboarding_failed:
    'Code Assist did not finish setting this account up: open the Gemini CLI (`gemini`) once with it, then retry',
  provider_b_api_disabled:
    'an API Code Assist needs is turned off in the Google Cloud project of this login: enable it there, or set PROVIDER_B_PROJECT to a project that has it',
  provider_b_project_denied:
    'this Google account may not use its Code Assist project: grant it the "Gemini for Google Cloud User" role there, or set PROVIDER_B_PROJECT to a project it may use',
  provider_b_network_denied:
    'a VPC Service Controls perimeter of the Code Assist project refuses calls from where the gateway runs: ask the project administrator to let this network in',
  provider_b_account_suspended:
    'Google suspended this Google account for Gemini (terms of service): appeal with Google, or log in with another account',
} as const;

/**
 * `provider_b_project_required` when a VPC Service Controls perimeter refused `:loadCodeAssist`:
 * the pinned CLI then goes on with the configured project, so the fix is to configure it.
 */
export const PERIMETER_PROJECT_FIX =
  'a VPC Service Controls perimeter refused Code Assist set-up (:loadCodeAssist), so no project is known: set PROVIDER_B_PROJECT to the id of the Code Assist project inside the perimeter, as GOOGLE_CLOUD_PROJECT is set for the Gemini CLI';

export type ProviderBFixReason = keyof typeof PROVIDER_B_FIXES;

/** Where docs/ explain the project set-up and each of its failures. */
export const PROJECT_SETUP_DOC = 'docs/providers.md#project-setup-loadcodeassist-as-the-gemini-cli-does-it';
/** Where docs/ explain the 403s of a turn that a new login does not fix. */
export const REFUSED_LOGIN_DOC = 'docs/providers.md#a-403-that-a-new-login-does-not-fix';

/** What a 403 body says beyond its status (docs/upstream/provider-b.md §10.1). */
export interface ForbiddenFacts {
  /** `ErrorInfo` details in order: reason, domain and the metadata's string values. */
  readonly errorInfos: readonly {
    readonly reason: string;
    readonly domain?: string;
    readonly metadata?: Readonly<Record<string, string>>;
  }[];
  /** The `url` of each `Help.links[]` entry, in order. */
  readonly helpLinks: readonly string[];
}

/** A 403 about the account or its project, not its token: which, and where Google sends the user. */
export interface RefusedLogin {
  readonly reason: Exclude<
    ProviderBFixReason,
    'provider_b_project_required' | 'provider_b_account_unsupported' | 'provider_b_onboarding_failed'
  >;
  /** A Google page that fixes it (validation, API activation, appeal), fit for a log line; never for the client. */
  readonly link?: string;
}

/** The Code Assist hosts whose `VALIDATION_REQUIRED` the Gemini CLI turns into its validation prompt. */
const CODE_ASSIST_DOMAINS = new Set([
  'cloudcode-pa.googleapis.com',
  'staging-cloudcode-pa.googleapis.com',
  'autopush-cloudcode-pa.googleapis.com',
]);

/**
 * The 403s that logging in again does not fix, read as the pinned Gemini CLI (0.61.0) reads them,
 * plus Google's standard project refusals; anything else (`ACCESS_TOKEN_SCOPE_INSUFFICIENT`, a
 * 403 without a reason) stays a login error. The CLI looks at the first `ErrorInfo` only:
 *
 * - `VALIDATION_REQUIRED` on a Code Assist domain: the CLI's validation prompt, with the link of
 *   the first `Help.links[]` entry, else the `validation_link` metadata (Google's bodies name it
 *   `validation_url`);
 * - `TOS_VIOLATION`: the CLI's account-suspended screen, with the `appeal_url` metadata;
 * - `SECURITY_POLICY_VIOLATED`: VPC Service Controls (the CLI lets it through at set-up);
 * - `SERVICE_DISABLED` (with `activationUrl`) and `IAM_PERMISSION_DENIED`: the project, not the login.
 */
export function readRefusedLogin(facts: ForbiddenFacts): RefusedLogin | undefined {
  const info = facts.errorInfos.at(0);
  if (!info) return undefined;
  const metadata = info.metadata ?? {};
  switch (info.reason) {
    case 'VALIDATION_REQUIRED': {
      const domain = (info.domain ?? '').replace(/[^a-zA-Z0-9.-]/g, '');
      if (!CODE_ASSIST_DOMAINS.has(domain)) return undefined;
      return refused(
        'provider_b_validation_required',
        facts.helpLinks.at(0) ?? metadata.validation_link ?? metadata.validation_url,
      );
    }
    case 'TOS_VIOLATION':
      return refused('provider_b_account_suspended', metadata.appeal_url);
    case 'SECURITY_POLICY_VIOLATED':
      return refused('provider_b_network_denied', facts.helpLinks.at(0));
    case 'SERVICE_DISABLED':
      return refused('provider_b_api_disabled', metadata.activationUrl ?? facts.helpLinks.at(0));
    case 'IAM_PERMISSION_DENIED':
      return refused('provider_b_project_denied', undefined);
    default:
      return undefined;
  }
}

function refused(reason: RefusedLogin['reason'], link: string | undefined): RefusedLogin {
  const googleLink = logLink(link);
  return googleLink === undefined ? { reason } : { reason, link: googleLink };
}

/**
 * A link an upstream body names, fit for a log line: an https URL on google.com or one of its
 * subdomains only, as its origin and path, and the `project` an API activation page is for. The
 * rest of the query and the fragment are left out: Google puts the sign-in token and the account's
 * e-mail there (`Email=someone%40example.com`, which no pattern for an address matches), and the
 * page alone tells the operator where to go. Sanitized and
 * bounded like an upstream message. Anything else is left out.
 */
export function logLink(value: string | undefined): string | undefined {
  if (value === undefined || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  const host = url.hostname.toLowerCase();
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '') return undefined;
  if (host !== 'google.com' && !host.endsWith('.google.com')) return undefined;
  // The one query value kept: which Google Cloud project an activation page is for (an id, not a secret).
  const project = url.searchParams.get('project');
  const query = project !== null && /^[a-z0-9][a-z0-9-]{0,62}$/.test(project) ? `?project=${project}` : '';
  // The query is built from a checked id, so only the rest passes the sanitizer (which drops queries).
  const page = sanitizeUpstreamMessage(`${url.origin}${url.pathname}`);
  return page === undefined ? undefined : `${page}${query}`;
}
