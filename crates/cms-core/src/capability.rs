//! Capabilities: the flat strings that access control is made of.
//!
//! The fifteen core capabilities are an enum, so a typo is a compile error. Plugins may declare
//! further, namespaced capabilities (`forms.export`); those are carried as validated strings.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! core_capabilities {
    ($($variant:ident => $name:literal),+ $(,)?) => {
        /// One of the core capabilities of SPEC.md (the complete list).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum CoreCapability { $($variant),+ }

        impl CoreCapability {
            pub const ALL: &'static [CoreCapability] = &[$(CoreCapability::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $(CoreCapability::$variant => $name),+ }
            }

            pub fn parse(s: &str) -> Option<CoreCapability> {
                match s { $($name => Some(CoreCapability::$variant),)+ _ => None }
            }
        }
    };
}

core_capabilities! {
    DocumentRead => "document.read",
    DocumentCreate => "document.create",
    DocumentUpdate => "document.update",
    DocumentDelete => "document.delete",
    DocumentPublish => "document.publish",
    DocumentUnpublish => "document.unpublish",
    AssetRead => "asset.read",
    AssetUpload => "asset.upload",
    AssetDelete => "asset.delete",
    MemberInvite => "member.invite",
    MemberRemove => "member.remove",
    MemberChangeRole => "member.changeRole",
    ApiKeyManage => "apiKey.manage",
    RoleManage => "role.manage",
    OrgSettings => "org.settings",
}

impl CoreCapability {
    /// The read capability a write capability implies (SPEC.md capability rule 2).
    pub fn implied_read(self) -> Option<CoreCapability> {
        use CoreCapability::*;
        match self {
            DocumentCreate | DocumentUpdate | DocumentDelete | DocumentPublish
            | DocumentUnpublish => Some(DocumentRead),
            AssetUpload | AssetDelete => Some(AssetRead),
            _ => None,
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u8)
    }
}

/// What a capability is for, as a capability picker shows it (SPEC.md extension point
/// `cms/capabilities`: `title`, `description`, `group`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct CapabilityInfo {
    #[schema(value_type = String)]
    pub name: Capability,
    pub title: String,
    pub description: String,
    /// Where a picker lists it: `documents`, `assets`, `people`, `settings`, or a plugin's own.
    pub group: String,
    /// The plugin that declared it; absent for a core capability.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
}

impl CoreCapability {
    /// The catalog entry of a core capability, worded after SPEC.md's table.
    pub fn info(self) -> CapabilityInfo {
        use CoreCapability::*;
        let (title, description, group) = match self {
            DocumentRead => (
                "Read documents",
                "Read documents, draft and published",
                "documents",
            ),
            DocumentCreate => ("Create documents", "Create documents", "documents"),
            DocumentUpdate => ("Update documents", "Update documents", "documents"),
            DocumentDelete => ("Delete documents", "Delete documents", "documents"),
            DocumentPublish => ("Publish documents", "Publish a draft", "documents"),
            DocumentUnpublish => (
                "Unpublish documents",
                "Revert a published document to draft",
                "documents",
            ),
            AssetRead => ("Read assets", "Read assets", "assets"),
            AssetUpload => ("Upload assets", "Upload assets", "assets"),
            AssetDelete => ("Delete assets", "Delete assets", "assets"),
            MemberInvite => ("Invite members", "Invite members", "people"),
            MemberRemove => ("Remove members", "Remove members", "people"),
            MemberChangeRole => ("Change roles", "Change a member's role", "people"),
            ApiKeyManage => ("Manage API keys", "Create and delete API keys", "settings"),
            RoleManage => (
                "Manage roles",
                "Create, edit and delete custom roles",
                "settings",
            ),
            OrgSettings => (
                "Organization settings",
                "Edit the organization's name, slug, metadata and plugin settings",
                "settings",
            ),
        };
        CapabilityInfo {
            name: Capability::Core(self),
            title: title.into(),
            description: description.into(),
            group: group.into(),
            plugin: None,
        }
    }
}

impl fmt::Display for CoreCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A capability: a core one, or one a plugin declared.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    Core(CoreCapability),
    /// A namespaced capability (`<plugin>.<action>`) that is not a core one. Whether a plugin
    /// actually declared it is decided by the service layer, which knows the plugins.
    Plugin(String),
}

/// Why a string is not a capability.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a capability: expected a core capability or `<namespace>.<action>`")]
pub struct InvalidCapability(pub String);

impl FromStr for Capability {
    type Err = InvalidCapability;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(core) = CoreCapability::parse(s) {
            return Ok(Capability::Core(core));
        }
        let well_formed = s.len() <= 100
            && s.split('.').count() >= 2
            && s.split('.').all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            });
        // A core namespace with an unknown action is a typo, not a plugin capability.
        let core_namespace = ["document", "asset", "member", "apiKey", "role", "org"]
            .iter()
            .any(|ns| s.split('.').next() == Some(ns));
        if well_formed && !core_namespace {
            Ok(Capability::Plugin(s.to_string()))
        } else {
            Err(InvalidCapability(s.to_string()))
        }
    }
}

impl Capability {
    pub fn as_str(&self) -> &str {
        match self {
            Capability::Core(c) => c.as_str(),
            Capability::Plugin(s) => s,
        }
    }
}

impl From<CoreCapability> for Capability {
    fn from(c: CoreCapability) -> Self {
        Capability::Core(c)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A capability name: built-in ones are listed, plugin ones follow the same grammar.
impl utoipa::PartialSchema for Capability {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some(
                "A capability, such as `documents.read` or `assets.write`.",
            ))
            .into()
    }
}

impl utoipa::ToSchema for Capability {}

impl utoipa::PartialSchema for CapabilitySet {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ArrayBuilder::new()
            .items(<Capability as utoipa::PartialSchema>::schema())
            .into()
    }
}

impl utoipa::ToSchema for CapabilitySet {}

impl Serialize for Capability {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Capability {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A set of capabilities. Core capabilities are a bit set, so the hot check
/// (`has(CoreCapability::DocumentRead)`) is one AND.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapabilitySet {
    core: u16,
    plugin: BTreeSet<String>,
}

impl CapabilitySet {
    pub fn empty() -> Self {
        Self::default()
    }

    /// Every core capability and the given plugin ones.
    pub fn all_with(plugin: impl IntoIterator<Item = String>) -> Self {
        let mut set = Self::all_core();
        set.plugin.extend(plugin);
        set
    }

    pub fn all_core() -> Self {
        CoreCapability::ALL.iter().copied().collect()
    }

    /// Reading content: documents and assets. What a viewer and a `read` key hold.
    pub fn content_reader() -> Self {
        [CoreCapability::DocumentRead, CoreCapability::AssetRead]
            .into_iter()
            .collect()
    }

    /// Writing content: every document capability and the asset writes, with the reads they
    /// imply. What an editor and a `write` key hold.
    pub fn content_writer() -> Self {
        use CoreCapability::*;
        let writes: CapabilitySet = [
            DocumentCreate,
            DocumentUpdate,
            DocumentDelete,
            DocumentPublish,
            DocumentUnpublish,
            AssetUpload,
            AssetDelete,
        ]
        .into_iter()
        .collect();
        writes.with_implied_reads()
    }

    pub fn has(&self, cap: CoreCapability) -> bool {
        self.core & cap.bit() != 0
    }

    pub fn contains(&self, cap: &Capability) -> bool {
        match cap {
            Capability::Core(c) => self.has(*c),
            Capability::Plugin(p) => self.plugin.contains(p),
        }
    }

    pub fn insert(&mut self, cap: Capability) {
        match cap {
            Capability::Core(c) => self.core |= c.bit(),
            Capability::Plugin(p) => {
                self.plugin.insert(p);
            }
        }
    }

    /// Adds the read capability every write capability implies (SPEC.md capability rule 2).
    pub fn with_implied_reads(mut self) -> Self {
        for cap in CoreCapability::ALL {
            if self.has(*cap)
                && let Some(read) = cap.implied_read()
            {
                self.core |= read.bit();
            }
        }
        self
    }

    /// The capabilities present in both sets.
    pub fn intersect(&self, other: &CapabilitySet) -> CapabilitySet {
        CapabilitySet {
            core: self.core & other.core,
            plugin: self.plugin.intersection(&other.plugin).cloned().collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.core == 0 && self.plugin.is_empty()
    }

    /// Core capabilities in their canonical order, then plugin ones sorted.
    pub fn iter(&self) -> impl Iterator<Item = Capability> + '_ {
        CoreCapability::ALL
            .iter()
            .filter(|c| self.has(**c))
            .map(|c| Capability::Core(*c))
            .chain(self.plugin.iter().map(|p| Capability::Plugin(p.clone())))
    }

    pub fn to_strings(&self) -> Vec<String> {
        self.iter().map(|c| c.as_str().to_string()).collect()
    }
}

impl FromIterator<CoreCapability> for CapabilitySet {
    fn from_iter<I: IntoIterator<Item = CoreCapability>>(iter: I) -> Self {
        let mut set = CapabilitySet::default();
        for c in iter {
            set.core |= c.bit();
        }
        set
    }
}

impl FromIterator<Capability> for CapabilitySet {
    fn from_iter<I: IntoIterator<Item = Capability>>(iter: I) -> Self {
        let mut set = CapabilitySet::default();
        for c in iter {
            set.insert(c);
        }
        set
    }
}

impl Serialize for CapabilitySet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// Who may call a plugin route or use a plugin's assistant tool (SPEC.md "Plugin-contributed
/// routes"): anyone, any signed-in member of the active organization, or a member holding
/// every listed capability. There is no default: a declaration must say which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequiredCapabilities {
    /// `"public"`: no credential needed.
    Public,
    /// `[]`: any signed-in member of the active organization.
    Members,
    /// `["forms.export", ...]`: a member holding all of these.
    All(Vec<Capability>),
}

impl RequiredCapabilities {
    /// Every one of `capabilities`; an empty list means any member.
    pub fn all(capabilities: impl IntoIterator<Item = Capability>) -> Self {
        let list: Vec<Capability> = capabilities.into_iter().collect();
        if list.is_empty() {
            RequiredCapabilities::Members
        } else {
            RequiredCapabilities::All(list)
        }
    }

    /// Parses the JSON form of a declaration: the string `"public"` or an array of
    /// capability names.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, String> {
        match value {
            serde_json::Value::String(s) if s == "public" => Ok(RequiredCapabilities::Public),
            serde_json::Value::Array(items) => items
                .iter()
                .map(|item| {
                    item.as_str()
                        .ok_or_else(|| format!("`{item}` is not a capability name"))?
                        .parse::<Capability>()
                        .map_err(|e| e.to_string())
                })
                .collect::<Result<Vec<_>, _>>()
                .map(RequiredCapabilities::all),
            other => Err(format!(
                "requiredCapabilities must be \"public\" or an array of capabilities, not `{other}`"
            )),
        }
    }

    /// The capabilities a caller must hold (none for `Public` and `Members`).
    pub fn capabilities(&self) -> &[Capability] {
        match self {
            RequiredCapabilities::All(list) => list,
            _ => &[],
        }
    }

    pub fn is_public(&self) -> bool {
        matches!(self, RequiredCapabilities::Public)
    }
}

impl Serialize for RequiredCapabilities {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequiredCapabilities::Public => serializer.serialize_str("public"),
            other => other.capabilities().serialize(serializer),
        }
    }
}

impl utoipa::PartialSchema for RequiredCapabilities {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Type};
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["public"])),
            )
            .item(ArrayBuilder::new().items(ObjectBuilder::new().schema_type(Type::String)))
            .description(Some(
                "`public` (anyone), `[]` (any signed-in member) or the capabilities a member must hold",
            ))
            .into()
    }
}

impl utoipa::ToSchema for RequiredCapabilities {}

#[cfg(test)]
mod tests;
