import { defineDictionaries } from '../../../../lib/i18n.js';

/** The sign-in page's own words in every language (the words pages share are in texts/). */
export const authTexts = defineDictionaries({
  en: {
    signInTitle: 'Sign in to your dashboard',
    badCredentials: 'Wrong email or password.',
    tooManyAttempts: 'Too many sign-in attempts. Wait a minute and try again.',
    sessionEnded: 'Your session ended. Sign in again.',
  },
  fr: {
    signInTitle: 'Connexion au tableau de bord',
    badCredentials: 'E-mail ou mot de passe incorrect.',
    tooManyAttempts: 'Trop de tentatives de connexion. Attendez une minute et réessayez.',
    sessionEnded: 'Votre session a pris fin. Reconnectez-vous.',
  },
  ar: {
    signInTitle: 'تسجيل الدخول إلى لوحة التحكم',
    badCredentials: 'البريد الإلكتروني أو كلمة المرور غير صحيحة.',
    tooManyAttempts: 'محاولات دخول كثيرة. انتظر دقيقة ثم أعد المحاولة.',
    sessionEnded: 'انتهت جلستك. سجّل الدخول من جديد.',
  },
});
