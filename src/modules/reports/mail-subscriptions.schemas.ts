import { Type } from 'typebox';

export const MailSubscription = Type.Object({
  weekly: Type.Boolean({ description: 'You take the weekly report (on unless you opted out)' }),
  monthly: Type.Boolean({ description: 'You take the monthly report (off unless you opted in)' }),
  spike: Type.Boolean({ description: 'You take the traffic-spike alerts (on unless you opted out)' }),
  sendWeeklyReports: Type.Boolean({ description: "The website's switch for reports (weekly and monthly): off, no member gets them" }),
  sendViralTrafficAlerts: Type.Boolean({ description: "The website's switch for traffic-spike alerts: off, no member gets them" }),
});

export const MailSubscriptionBody = Type.Object(
  {
    weekly: Type.Optional(Type.Boolean()),
    monthly: Type.Optional(Type.Boolean()),
    spike: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ weekly: true, monthly: true, spike: false }] },
);
