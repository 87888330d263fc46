import { z } from 'zod';

const groupList = z.array(z.string().min(1, 'must not be empty')).default([]);

/**
 * `console.oidc` (SPEC 25): sign-in through the company's identity provider. Groups map to the
 * roles admin keys have; several groups give the highest role (admin > viewer > team-admin).
 */
export const oidcSchema = z
  .object({
    issuer: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
    clientId: z.string().min(1, 'must not be empty'),
    clientSecret: z.string().min(1, 'must not be empty'),
    /** A name for the sign-in button ("Sign in with Okta"). */
    displayName: z.string().min(1).default('your identity provider'),
    scopes: z.array(z.string().min(1)).default(['openid', 'email', 'profile', 'groups']).refine((scopes) => scopes.includes('openid'), 'must include openid'),
    groupsClaim: z.string().min(1).default('groups'),
    roles: z
      .object({
        admin: groupList,
        viewer: groupList,
        teamAdmin: z.record(z.string().min(1), z.array(z.string().min(1))).default({}),
      })
      .strict()
      .prefault({}),
    /** Email domains a person may sign in from (exact, or a subdomain of one); absent: any. */
    allowedDomains: z
      .array(z.string().regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/i, 'must be a domain such as acme.com').transform((d) => d.toLowerCase()))
      .min(1, 'must name at least one domain (or leave the key out)')
      .optional(),
    /** Where the IdP sends the browser back; absent: this gateway's /admin/oidc/callback as the request reached it. */
    redirectUrl: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  })
  .strict()
  .superRefine((oidc, ctx) => {
    const { admin, viewer, teamAdmin } = oidc.roles;
    if (admin.length + viewer.length + Object.values(teamAdmin).flat().length === 0) {
      ctx.addIssue({ code: 'custom', path: ['roles'], message: 'must map at least one group to a role (admin, viewer or teamAdmin)' });
    }
  });

export type OidcSettings = z.infer<typeof oidcSchema>;

/** `console:` — how people sign in to the console (SPEC 17, 25). */
export const consoleSchema = z
  .object({
    oidc: oidcSchema.optional(),
    /** Break glass: sign-in with an admin key; false leaves only the identity provider. */
    keySignIn: z.boolean().default(true),
  })
  .strict()
  .superRefine((settings, ctx) => {
    if (!settings.keySignIn && settings.oidc === undefined) {
      ctx.addIssue({ code: 'custom', path: ['keySignIn'], message: 'may be false only when console.oidc is configured (else no one could sign in)' });
    }
  })
  .prefault({});
