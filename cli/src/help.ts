// `valise help`: every command on one screen; docs/cli.md has the details.

export const HELP = `valise: send and receive files with Valise, manage keys and webhooks.

Usage: valise COMMAND [FLAGS]

Transfers
  send FILE…            Upload files and print the share link
                          --to EMAIL (repeat for more) --expires 24h --max-downloads N --password PASSWORD
                          --title TEXT --e2e --approval --limit-rate 10M
  resume [TRANSFER_ID]  Finish an interrupted send (--list shows them)
  get SHARE_URL         Download a share link's files  -o DIR --force --password PASSWORD --wait
                          --zip: all of them as one ZIP (-o FILE.zip or DIR)
  ls                    List transfers  --status S --search TEXT --limit N --all
  show TRANSFER_ID      Show a transfer and its files
  archive TRANSFER_ID   Download your transfer as one ZIP  -o FILE.zip|DIR --force
  rm TRANSFER_ID        Revoke a transfer
  approve TRANSFER_ID   Approve a transfer  --reject --note TEXT
  collections create|ls|show|add|remove|rotate-link|disable-link|rm   Collections of transfers
  recipients ls|add|show|update|rm|of   The address book; \`of TRANSFER_ID\`: who downloaded what

Receiving
  intake keygen -o KEY_FILE          A key pair for end-to-end intakes (the private key stays in KEY_FILE)
  intake create --title T --key KEY_FILE|--server   An intake; prints its publishable key
  intake ls|show|docs|close|rm       Intakes and their documents
  intake get INTAKE_ID DOC_ID --key KEY_FILE -o DIR   Download a document, decrypted here
  intake submit INTAKE_ID FILE… --publishable-key cip_…   Send files to an intake

Vaults (data rooms)
  coffre create --name T [--expires 30d]   A vault; \`ls|show|rm\` too
  coffre invite COFFRE_ID EMAIL --access view|download|upload   Mail a member their link
  coffre members|revoke              Members; a revoked member's link stops working
  coffre put COFFRE_ID FILE…         Add files  (\`items\`, \`get COFFRE_ID ITEM_ID -o DIR\`)
  coffre zip COFFRE_ID [ITEM_ID…]    Items (or all) as one ZIP  (-o FILE.zip|DIR)
  coffre log COFFRE_ID               Who opened, downloaded or added what

Account
  login                 Store an API key  --api-key KEY --base-url URL (or pipe the key on stdin)
  logout                Forget the profile's key
  whoami                Show the key in use
  keys create|ls|rotate|revoke     API keys (--mfa-code CODE for full keys)
  webhooks create|ls|test|deliveries   Webhooks
  listen --forward-to URL          Verify webhook signatures locally and forward them
  audit                 The audit log  --action A --resource-type T --since T --until T
  audit export|verify   Export it (--format csv, --output FILE), verify its hash chain
  analytics [summary|geo|funnel|heatmap|top-transfers|top-recipients]   Numbers  --since T --until T --tz ZONE --limit N
  legal documents|accept SLUG      Valise's legal documents; accept the current version
  gdpr export [--user ID] [-o FILE]   Export what Valise holds (waits, then downloads the JSON)
  gdpr acceptances      Your acceptance of each legal document
  scim tokens create|ls|revoke     SCIM tokens for Entra ID or Okta (--mfa-code CODE)
  scim audit            What identity providers did  --operation OP --limit N
  mcp tokens create|ls|revoke      MCP tokens for an MCP client  --scope SCOPE… (--mfa-code CODE)
  billing subscription|invoices    The plan, usage this period and invoices
  billing events        Payment-processor events  --type T --since T --limit N --raw

Global flags
  --json                Print the API's JSON on stdout (errors as JSON on stderr)
  --profile NAME        Use another profile of the config file (or VALISE_PROFILE)
  -h, --help            This help

Environment: VALISE_API_KEY, VALISE_BASE_URL (default http://127.0.0.1:8080), VALISE_CONFIG, VALISE_PROFILE
Exit codes: 0 ok, 1 usage or local error, 2 API error, 3 network error, 4 a file exists (use --force)
`;
