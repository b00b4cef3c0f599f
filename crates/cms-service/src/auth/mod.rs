//! Authentication: sign-up, sign-in, sign-out, sessions, and turning credentials into an
//! [`Actor`](crate::actor::Actor) (SPEC.md Authentication points 1 to 8, CONTRACT.md section 3).
//!
//! `sign_up.rs` makes accounts (sign-up under the first-admin policies, the operator's
//! `cms user create`, the claim code), `session.rs` signs in and out, `credentials.rs` turns
//! the credentials a request carries into an actor (sliding the session's lifetime);
//! `password.rs` hashes passwords and `tokens.rs` holds the single-use e-mailed tokens;
//! `two_factor.rs` enrols authenticator apps and completes a sign-in with a code, whose
//! arithmetic is `totp.rs`'s.

mod credentials;
mod oidc;
mod session;
mod sign_up;
pub(crate) mod tokens;
mod totp;
mod two_factor;

pub use self::credentials::{Credentials, Resolved};
pub(crate) use self::oidc::OidcProviders;
pub use self::oidc::{
    OidcCallback, OidcProviderSettings, OidcProviderView, OidcRefusal, OidcSignedIn, OidcStart,
};
pub use self::session::{Authenticated, ClientInfo, SignIn, SignInOutcome};
pub use self::sign_up::{ClaimCode, NewUser, SignUp, SignedUp};
pub(crate) use self::sign_up::{claim_first_admin, first_admin_exists};
pub(crate) use self::tokens::verification_mail;
pub use self::two_factor::{SecondFactor, TwoFactorEnrolment, TwoFactorStatus};

use crate::Inner;
use crate::secret::{AuthSecret, Purpose};
use crate::secret_box::SecretBox;

/// The box for what authentication keeps sealed (two-factor secrets at rest, a single sign-on
/// in progress in the browser): the configured encryption key's, or without one a key derived
/// from the auth secret, which lives outside the database as well.
pub(crate) fn auth_box(encryption_key: Option<&str>, secret: &AuthSecret) -> SecretBox {
    match encryption_key {
        Some(key) => SecretBox::new(key),
        None => SecretBox::new(&secret.hash_hex(Purpose::AuthSeal, "v1")),
    }
}

pub struct AuthService<'a> {
    inner: &'a Inner,
}

impl<'a> AuthService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        AuthService { inner }
    }
}
