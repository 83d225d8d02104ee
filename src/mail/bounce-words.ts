// The words and codes mail servers use for each bounce reason (src/mail/bounce-reasons.ts), as found in
// real bounces: the tables src/mail/bounce-classify.ts reads.
import type { BounceReason } from './bounce-reasons';

/** The server's words for each reason, most specific first: the first reason whose words match wins. */
export const WORDS: [BounceReason, RegExp][] = [
  [
    'sender_rejected',
    /domain of sender|sender (?:address |domain )?(?:rejected|denied|refused|verify failed)|sender address (?:\S+ )?(?:is )?(?:invalid|unknown|not)|unverified sender|sender verification/,
  ],
  [
    'network_error',
    /name service error.{0,120}(?:try again|malformed|unexpected)|(?:temporary|temporarily) (?:dns|lookup)/,
  ],
  ['has_moved', /\bhas moved\b|address (?:\S+ )?(?:has been )?replaced by|no longer (?:in use|valid), (?:please )?use/],
  [
    'not_accept',
    /system not accepting network messages|no smtp service|does not accept (?:any )?(?:e-?)?mail|accepts no mail|null mx|no (?:e-?mail|mail) (?:is )?accepted for (?:this )?domain/,
  ],
  [
    'virus_detected',
    /\bvirus\b|malware|infected|harmful (?:content|attachment)|(?:attachment|file) (?:type )?(?:is )?not allowed/,
  ],
  [
    'mailbox_full',
    /mail ?box (?:is |was )?(?:full|over ?quota)|over ?quota|quota (?:exceeded|full|limit)|exceed(?:s|ed)? (?:the |his |her |their )?(?:storage |mailbox |disk )?(?:quota|allocation)|(?:insufficient|not enough) (?:disk |storage )?space|disk (?:quota|full)|mail(?:box|folder) (?:size )?limit|user.{0,20}over.{0,10}quota|(?:account|inbox|mailbox|storage) (?:is )?full|too many messages in (?:the |this )?mailbox|is full\b|full mailbox|mailbox.{0,12}はいっぱい|メールボックスが一杯/,
  ],
  [
    'message_too_large',
    /(?:message|mail|e-?mail|size|data) (?:is |was )?too (?:big|large)|exceeds? (?:the )?(?:maximum|max|fixed|size|message size)|message size (?:exceeds|limit|too)|size limit|larger than (?:the )?(?:maximum|max|allowed)|message (?:length|size) exceeds|maximum (?:message )?size/,
  ],
  [
    'user_unknown',
    /user(?:name)? (?:is )?unknown|no valid recipients?|address (?:couldn't|could not|can't|cannot) be found|address rejected\.|invalid (?:final delivery )?userid|check (?:if|that|whether) (?:the )?address is correct|unknown (?:user|recipient|mailbox|address|local|alias)|no such (?:user|mailbox|recipient|address|person|account|local user)|(?:recipient|address|user|mailbox|account|e-?mail address)(?: \S+)? (?:does not|doesn't|did not|not) exists?|(?:user|recipient|mailbox|address|account) (?:was )?not (?:found|known|listed|present)|not (?:a )?(?:valid|known|local) (?:recipient|user|mailbox|address)|invalid (?:recipient|mailbox|address|user|e-?mail address)|(?:recipient|address) (?:is )?invalid|mailbox (?:is )?unavailable|mailbox unavaiable|no mailbox|recipient (?:address )?rejected: (?:user unknown|unknown|invalid|access denied|undeliverable|userunknown)|not listed in (?:the )?(?:public name|domino directory|name directory|directory)|not in (?:my )?(?:validrcptto|list of allowed)|badrcptto|bad (?:destination )?(?:mailbox|recipient|address)|(?:user|recipient|name) (?:is )?not recogni[sz]ed|recipient name is not recognized|no one at this address|no account by that name|address (?:no longer|is not) (?:accepts mail|valid)|does not have (?:a|an) \S+ account|isn't in my list|undeliverable address|user doesn't have|no longer (?:a valid|available|active)|adresse.{0,20}invalide|utilisateur inconnu|unknown or illegal alias|mailbox (?:does not|not) exist|resolver\.adr\.recipientnotfound|recipient ?not ?found|not (?:an )?active address/,
  ],
  [
    'host_unknown',
    /host (?:or domain name )?not found|host \S+ not found|unrouteable address|account or domain may not exist|\b[a-z0-9-]+(?:\.[a-z0-9-]+)+ does not exist|domain (?:is )?not (?:reachable|valid)|(?:unknown|invalid) (?:host|domain)|host unknown|domain (?:name )?(?:not found|does not exist|doesn't exist|is not (?:valid|found))|no such domain|(?:no|invalid) mx\b|unrouteable (?:mail )?domain|name service error|nxdomain|domain (?:lookup|resolution) failed|unable to (?:resolve|find) (?:the )?(?:host|domain|mx)|host name lookup failure/,
  ],
  [
    'suspended',
    /suspended|(?:mailbox|account|address|user) (?:is |has been )?(?:disabled|inactive|deactivated|locked|frozen|closed|blocked|expired|not active)|inactive (?:user|account|mailbox)|disabled (?:user|account|mailbox)|account (?:has been )?(?:disabled|closed)/,
  ],
  [
    'expired',
    /retry (?:time(?:out)?|period) (?:exceeded|expired)|(?:message|delivery|mail) (?:has |was )?expired|(?:has been|was) in (?:the )?queue too long|too long in (?:the )?queue|giving up|gave up|(?:could not|cannot|can't) (?:be )?(?:delivered|send message) for \d+|delivery time expired|message timed out|expired after|retry time not reached|undeliverable for \d+ days/,
  ],
  [
    'rate_limited',
    /too many (?:connections|concurrent|sessions|messages|recipients|mails)|rate (?:limit|exceeded)|throttl|slow down|(?:sending|connection|message) (?:rate|limit) exceeded|exceeded (?:the )?(?:rate|connection|sending|message) limit|connection limit|receiving mail at a rate/,
  ],
  [
    'auth_failure',
    /\bspf\b|\bdkim\b|\bdmarc\b|unauthenticated (?:e-?mail|mail|sender)|(?:sender|message) (?:is )?not authenticated|authentication (?:check )?failed/,
  ],
  [
    'spam_detected',
    /\bspam\b(?!haus)|unsolicited|bulk (?:e-?)?mail|junk mail|message content rejected|content (?:filter|rejected)|looks like|identified as|classified as|suspicious|phishing|scam/,
  ],
  [
    'blocked',
    /block ?list|black ?list|blocked|\brbl\b|dnsbl|spamhaus|spamcop|barracuda|reputation|listed (?:at|in|on|by)|(?:client|sender|your) (?:host|ip)(?: address)? (?:\S+ )?(?:rejected|refused|denied|blocked|is not allowed)|(?:connection|access) (?:refused|rejected|denied)|not allowed to send|(?:reverse|rdns|ptr)(?: dns| record| lookup)?|requires? (?:a )?(?:valid )?ptr|banned|your ip|ip address (?:\S+ )?(?:is )?(?:not|rejected|refused|denied)|poor|abuse/,
  ],
  [
    'relay_denied',
    /relay(?:ing)? (?:is )?(?:not permitted|denied|prohibited|not allowed|access denied)|not permitted to relay|unable to relay|(?:we do not|cannot|can't) relay|relay not|not (?:a )?local domain|no relaying/,
  ],
  [
    'sender_rejected',
    /sender (?:address |domain )?(?:rejected|denied|refused|invalid|unknown|verify failed)|(?:invalid|unknown|bad) sender|domain of sender|sender (?:is )?not (?:allowed|permitted)|mail from|return[- ]path|envelope (?:sender|from)|unverified sender|from address|sender verification/,
  ],
  [
    'security_error',
    /\btls\b|starttls|encrypt|certificate|authentication (?:is )?required|must (?:issue|use|authenticate)|insecure/,
  ],
  [
    'policy',
    /polic(?:y|ies)|prohibited|not permitted|not allowed|violat|restricted|administrative(?:ly)?|denied by|refused by|rejected by|filter|forbidden/,
  ],
  [
    'content_rejected',
    /content|header|malformed|invalid (?:message|mime)|rfc ?5322|rfc ?2822|rfc ?822|not compliant|bare (?:lf|linefeed|cr)|line (?:is )?too long|8-?bit|message (?:is )?not accepted|message refused/,
  ],
  [
    'network_error',
    /network|timed? ?out|time-?out|connection (?:reset|closed|lost|dropped)|lost connection|no route|unreachable|dns (?:error|failure|problem)|mail loop|routing loop|too many hops|loops? (?:back|detected)|hop count exceeded/,
  ],
  [
    'syntax_error',
    /syntax error|command (?:unrecognized|not recognized)|unrecognized command|bad sequence|parameter(?:s)? not/,
  ],
  [
    'system_error',
    /system (?:error|full|problem)|internal (?:error|server error)|local error|server error|resources|out of memory|disk full|mailer error|temporary (?:failure|error|problem)|service (?:not available|unavailable)|unable to (?:deliver|process)|i\/o error|try again later/,
  ],
];

/**
 * Words that say the mailbox does not exist, beyond the bare "user unknown" that filters also answer with
 * after accepting the address.
 */
export const NONEXISTENT =
  /does not exist|doesn't exist|no valid recipient|(?:couldn't|could not|can't|cannot) be found|doesn't have (?:a|an) \S+ account|not listed in|not recogni[sz]ed|invalid (?:recipient|mailbox|final delivery userid)|destinataire invalide|mailbox (?:is )?unavailable|address is correct/;

/** Enhanced status codes (RFC 3463) by subject.detail, for a report whose words named nothing. */
export const STATUS: Record<string, BounceReason> = {
  '1.0': 'user_unknown',
  '1.1': 'user_unknown',
  '1.2': 'host_unknown',
  '1.3': 'user_unknown',
  '1.4': 'user_unknown',
  '1.6': 'has_moved',
  '1.7': 'sender_rejected',
  '1.8': 'sender_rejected',
  '1.10': 'user_unknown',
  '2.1': 'suspended',
  '2.2': 'mailbox_full',
  '2.3': 'message_too_large',
  '3.0': 'system_error',
  '3.1': 'system_error',
  '3.2': 'system_error',
  '3.4': 'message_too_large',
  '3.5': 'system_error',
  '4.0': 'network_error',
  '4.1': 'network_error',
  '4.2': 'network_error',
  '4.3': 'system_error',
  '4.4': 'host_unknown',
  '4.6': 'network_error',
  '4.7': 'expired',
  '5.0': 'syntax_error',
  '5.1': 'syntax_error',
  '5.2': 'syntax_error',
  '5.3': 'rate_limited',
  '5.4': 'syntax_error',
  '6.0': 'content_rejected',
  '6.1': 'content_rejected',
  '6.2': 'content_rejected',
  '6.3': 'content_rejected',
  '6.4': 'content_rejected',
  '6.5': 'content_rejected',
  '6.6': 'content_rejected',
  '7.0': 'policy',
  '7.1': 'policy',
  '7.2': 'policy',
  '7.5': 'security_error',
  '7.6': 'security_error',
  '7.7': 'security_error',
  '7.8': 'security_error',
  '7.9': 'security_error',
  '7.10': 'security_error',
  '7.11': 'security_error',
  '7.13': 'suspended',
  '7.14': 'policy',
  '7.17': 'suspended',
  '7.18': 'suspended',
  '7.20': 'auth_failure',
  '7.21': 'auth_failure',
  '7.22': 'auth_failure',
  '7.23': 'auth_failure',
  '7.24': 'auth_failure',
  '7.25': 'blocked',
  '7.26': 'auth_failure',
  '7.27': 'not_accept',
  '7.28': 'spam_detected',
};

/** Catch-all codes of a subject ("other protocol status"): the notice's words say more. */
export const WEAK_STATUS = new Set(['3.0', '4.0', '5.0', '7.0']);

/** Reply codes that name a cause on their own (RFC 5321). */
export const REPLY: Record<string, BounceReason> = {
  '421': 'rate_limited',
  '452': 'mailbox_full',
  '552': 'mailbox_full',
  '500': 'syntax_error',
  '501': 'syntax_error',
  '502': 'syntax_error',
  '503': 'syntax_error',
  '504': 'syntax_error',
  '521': 'not_accept',
  '556': 'not_accept',
};
