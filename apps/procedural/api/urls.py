from django.urls import path

from apps.procedural.api import views

prefix = "subjects/<str:external_id>"
urlpatterns = [
    path(f"{prefix}/sessions", views.SessionCreateApi.as_view(), name="sessions"),
    path(f"{prefix}/skills", views.SkillListApi.as_view(), name="skills"),
    path(f"{prefix}/skills/search", views.SkillSearchApi.as_view(), name="skills-search"),
    path(f"{prefix}/skills/<uuid:skill_id>", views.SkillDetailApi.as_view(), name="skill-detail"),
    path("feedback", views.FeedbackApi.as_view(), name="feedback"),
    path("skill-events/<uuid:event_id>/revert", views.SkillEventRevertApi.as_view(), name="skill-event-revert"),
]
