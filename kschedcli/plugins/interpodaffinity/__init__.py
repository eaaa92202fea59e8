"""The InterPodAffinity plugin: terms, the existing pods' index, alike pods."""
